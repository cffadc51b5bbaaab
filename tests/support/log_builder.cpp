#include "tests/support/log_builder.hpp"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <limits>
#include <stdexcept>

#include "runtime/batch/record_batch_builder.hpp"
#include "runtime/batch/record_batch_format.hpp"
#include "runtime/batch/record_batch_view.hpp"

namespace capstan::test {

namespace {

std::optional<bytes_view> view_of(const std::optional<std::string>& s) {
  if (!s) return std::nullopt;
  return bytes_view{reinterpret_cast<const uint8_t*>(s->data()), s->size()};
}

std::optional<std::string> string_of(const std::optional<bytes_view>& b) {
  if (!b) return std::nullopt;
  return std::string(reinterpret_cast<const char*>(b->data()), b->size());
}

} // namespace

bytes make_batch(const std::vector<test_record>& records) {
  record_batch_builder builder(offset{0}, records.empty() ? 0 : records.front().timestamp);
  for (const auto& r : records) builder.add(view_of(r.key), view_of(r.value), r.timestamp);
  return builder.build();
}

bytes make_batch(int count, const std::string& prefix, timestamp_ms timestamp, int keys,
                 size_t value_size) {
  std::vector<test_record> records;
  records.reserve(count);
  for (int i = 0; i < count; ++i) {
    std::string value = prefix + "-" + std::to_string(i);
    if (value.size() < value_size) value.resize(value_size, '.');
    std::optional<std::string> key;
    if (keys > 0) key = "k" + std::to_string(i % keys);
    records.push_back({key, value, timestamp});
  }
  return make_batch(records);
}

bytes make_producer_batch(producer_stamp producer, int count, const std::string& prefix,
                          timestamp_ms timestamp) {
  record_batch_builder builder(offset{0}, timestamp);
  builder.producer(producer.id, producer.epoch, producer.base_sequence);
  for (int i = 0; i < count; ++i) {
    const std::string value = prefix + "-" + std::to_string(i);
    builder.add(std::nullopt, bytes_view{reinterpret_cast<const uint8_t*>(value.data()), value.size()},
                timestamp);
  }
  return builder.build();
}

batch_buffer to_buffer(bytes batch) { return batch_buffer::of(std::move(batch)); }

std::vector<read_record> records_of(bytes_view padded_sequence) {
  std::vector<read_record> out;
  batch_sequence_reader reader(padded_sequence, batch_format::default_max_batch_bytes * 64);
  for (;;) {
    auto b = reader.next();
    if (!b) throw std::runtime_error("invalid batch in read: " + b.err().to_string());
    if (!*b) break;
    const auto& view = **b;
    view.for_each_record([&](const record_view& r) {
      out.push_back(read_record{view.base_offset() + r.offset_delta, string_of(r.key),
                                string_of(r.value), view.timestamp_of(r)});
    });
  }
  return out;
}


std::vector<read_record> partition_dir_records(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> logs;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".log") logs.push_back(e.path());
  std::sort(logs.begin(), logs.end());
  std::vector<read_record> out;
  for (const auto& file : logs) {
    std::ifstream in(file, std::ios::binary);
    bytes data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t pos = 0;
    while (pos + batch_format::header_size <= data.size()) {
      auto view = record_batch_view::parse(bytes_view{data}.subspan(pos), std::numeric_limits<size_t>::max());
      if (!view) break;
      auto batch = records_of(bytes_view{data}.subspan(pos, view->size_bytes()));
      out.insert(out.end(), batch.begin(), batch.end());
      pos = batch_format::align_up(pos + view->size_bytes());
    }
  }
  return out;
}

} // namespace capstan::test
