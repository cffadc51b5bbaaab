#include "runtime/storage/producer_snapshot.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <type_traits>

#include "runtime/batch/crc32c.hpp"
#include "runtime/storage/file_handle.hpp"

namespace capstan {

namespace {

template <class T>
void put(bytes& out, T value) {
  auto u = static_cast<std::make_unsigned_t<T>>(value);
  for (int shift = static_cast<int>(sizeof(T) - 1) * 8; shift >= 0; shift -= 8)
    out.push_back(static_cast<uint8_t>(u >> shift));
}

// Reads big-endian fields in order; every read is bounds-checked first by need().
class field_reader {
public:
  explicit field_reader(bytes_view data) : data_(data) {}
  bool need(size_t n) const { return data_.size() - pos_ >= n; }
  size_t position() const { return pos_; }
  size_t remaining() const { return data_.size() - pos_; }
  template <class T>
  T get() {
    std::make_unsigned_t<T> u = 0;
    for (size_t i = 0; i < sizeof(T); ++i) u = static_cast<std::make_unsigned_t<T>>((u << 8) | data_[pos_++]);
    return static_cast<T>(u);
  }

private:
  bytes_view data_;
  size_t pos_ = 0;
};

error corrupt(size_t at, const std::string& why) {
  return make_error(errc::corrupt_message,
                    "producer snapshot at byte " + std::to_string(at) + ": " + why);
}

} // namespace

std::string producer_snapshot_name(offset end) {
  char stem[32];
  std::snprintf(stem, sizeof stem, "%020lld", static_cast<long long>(end.value()));
  return std::string(stem) + std::string(producer_snapshot_suffix);
}

std::optional<offset> parse_producer_snapshot_name(std::string_view name) {
  if (name.size() != 20 + producer_snapshot_suffix.size() ||
      name.substr(20) != producer_snapshot_suffix)
    return std::nullopt;
  int64_t value = 0;
  for (char c : name.substr(0, 20)) {
    if (c < '0' || c > '9') return std::nullopt;
    if (value > (std::numeric_limits<int64_t>::max() - (c - '0')) / 10) return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return offset{value};
}

bytes encode_producer_snapshot(const producer_state& state) {
  bytes out;
  put<int16_t>(out, producer_snapshot_version);
  put<uint32_t>(out, 0);
  put<int32_t>(out, static_cast<int32_t>(state.producers().size()));
  for (const auto& [id, entry] : state.producers()) {
    put<int64_t>(out, id);
    put<int16_t>(out, entry.epoch);
    put<int32_t>(out, static_cast<int32_t>(entry.batches.size()));
    for (const auto& b : entry.batches) {
      put<int32_t>(out, b.first_sequence);
      put<int32_t>(out, b.last_sequence);
      put<int64_t>(out, b.first_offset.value());
      put<int64_t>(out, b.last_offset.value());
      put<int64_t>(out, b.max_timestamp);
    }
  }
  const uint32_t crc = crc32c(bytes_view(out).subspan(6));
  for (int i = 0; i < 4; ++i) out[2 + i] = static_cast<uint8_t>(crc >> (24 - 8 * i));
  return out;
}

result<producer_state> decode_producer_snapshot(bytes_view data, offset end) {
  field_reader in(data);
  if (!in.need(producer_snapshot_header_size))
    return corrupt(0, "only " + std::to_string(data.size()) + " bytes, shorter than its header");
  const auto version = in.get<int16_t>();
  if (version != producer_snapshot_version)
    return corrupt(0, "unknown version " + std::to_string(version));
  const auto stored_crc = in.get<uint32_t>();
  const auto actual_crc = crc32c(data.subspan(6));
  if (stored_crc != actual_crc)
    return corrupt(2, "crc " + std::to_string(stored_crc) + " does not match the content's " +
                          std::to_string(actual_crc));
  const auto count = in.get<int32_t>();
  if (count < 0) return corrupt(6, "negative producer count " + std::to_string(count));
  producer_state state;
  for (int32_t i = 0; i < count; ++i) {
    const size_t at = in.position();
    if (!in.need(producer_snapshot_producer_size)) return corrupt(at, "truncated producer entry");
    const auto id = in.get<int64_t>();
    producer_entry entry;
    entry.epoch = in.get<int16_t>();
    const auto batches = in.get<int32_t>();
    if (id < 0 || entry.epoch < 0 || batches < 1 ||
        batches > static_cast<int32_t>(producer_batches_retained) || state.find(id))
      return corrupt(at, "bad producer entry (id " + std::to_string(id) + ", epoch " +
                             std::to_string(entry.epoch) + ", " + std::to_string(batches) +
                             " batches)");
    if (!in.need(static_cast<size_t>(batches) * producer_snapshot_batch_size))
      return corrupt(at, "truncated batches of producer " + std::to_string(id));
    for (int32_t k = 0; k < batches; ++k) {
      producer_batch_entry b;
      b.first_sequence = in.get<int32_t>();
      b.last_sequence = in.get<int32_t>();
      b.first_offset = offset{in.get<int64_t>()};
      b.last_offset = offset{in.get<int64_t>()};
      b.max_timestamp = in.get<int64_t>();
      if (b.first_sequence < 0 || b.last_sequence < 0 || b.first_offset.value() < 0 ||
          b.last_offset < b.first_offset || b.last_offset >= end ||
          (!entry.batches.empty() && b.first_offset <= entry.batches.back().last_offset))
        return corrupt(at, "bad batch " + std::to_string(k) + " of producer " + std::to_string(id));
      entry.batches.push_back(b);
    }
    state.restore(id, std::move(entry));
  }
  if (in.remaining() != 0)
    return corrupt(in.position(), std::to_string(in.remaining()) + " bytes past the last producer");
  state.set_end_offset(end);
  return state;
}

status write_producer_snapshot(const std::filesystem::path& dir, const producer_state& state) {
  const bytes data = encode_producer_snapshot(state);
  return write_file_atomically(dir / producer_snapshot_name(state.end_offset()),
                               std::string_view(reinterpret_cast<const char*>(data.data()), data.size()));
}

result<producer_state> read_producer_snapshot(const std::filesystem::path& file) {
  const auto end = parse_producer_snapshot_name(file.filename().string());
  if (!end) return make_error(errc::kafka_storage_error, file.string() + ": not a snapshot file name");
  std::ifstream in(file, std::ios::binary);
  if (!in) return make_error(errc::kafka_storage_error, file.string() + ": cannot open");
  const bytes data{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) return make_error(errc::kafka_storage_error, file.string() + ": cannot read");
  auto state = decode_producer_snapshot(data, *end);
  if (!state) return make_error(state.code(), file.string() + ": " + state.err().message);
  return state;
}

result<std::vector<offset>> list_producer_snapshots(const std::filesystem::path& dir) {
  std::vector<offset> out;
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    if (auto end = parse_producer_snapshot_name(it->path().filename().string())) out.push_back(*end);
  if (ec) return make_error(errc::kafka_storage_error, "cannot list " + dir.string() + ": " + ec.message());
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace capstan
