#include "runtime/storage/producer_state_loader.hpp"

#include <spdlog/spdlog.h>

#include "runtime/batch/record_batch_format.hpp"
#include "runtime/batch/record_batch_view.hpp"
#include "runtime/storage/file_handle.hpp"
#include "runtime/storage/producer_snapshot.hpp"

namespace capstan {

namespace {

constexpr size_t scan_chunk_bytes = size_t{1} << 20;

producer_batch header_of(const uint8_t* h) {
  namespace bf = batch_format;
  return producer_batch{bf::load_be<int64_t>(h + bf::producer_id_at),
                        bf::load_be<int16_t>(h + bf::producer_epoch_at),
                        bf::load_be<int32_t>(h + bf::base_sequence_at),
                        bf::load_be<int32_t>(h + bf::last_offset_delta_at),
                        bf::load_be<int64_t>(h + bf::max_timestamp_at)};
}

template <class Keep>
status delete_snapshots_unless(const std::filesystem::path& dir, Keep keep) {
  auto ends = list_producer_snapshots(dir);
  if (!ends) return ends.err();
  for (size_t i = 0; i < ends->size(); ++i) {
    if (keep((*ends)[i], i + 1 == ends->size())) continue;
    if (auto s = remove_file(dir / producer_snapshot_name((*ends)[i])); !s) return s;
  }
  return {};
}

} // namespace

status scan_producers(const std::vector<std::shared_ptr<segment>>& segments, offset from,
                      producer_state& state) {
  namespace bf = batch_format;
  for (const auto& seg : segments) {
    offset pos = std::max(from, seg->base_offset());
    while (pos < seg->next_offset()) {
      auto slice = seg->read(pos, scan_chunk_bytes);
      if (!slice) return slice.err();
      if (slice->empty()) break;
      auto bytes = slice->bytes();
      size_t at = 0;
      while (at + bf::header_size <= bytes.size()) {
        auto size = record_batch_view::frame_size(bytes.subspan(at));
        if (!size || *size < bf::header_size || at + *size > bytes.size()) break;
        const uint8_t* h = bytes.data() + at;
        const offset base{bf::load_be<int64_t>(h + bf::base_offset_at)};
        const auto batch = header_of(h);
        if (batch.producer_id != no_producer_id) state.replay(batch, base);
        pos = base + batch.last_offset_delta + 1;
        at = bf::align_up(at + *size);
      }
      if (pos <= slice->first_offset) break; // no whole batch in the chunk
    }
  }
  return {};
}

result<producer_state> load_producer_state(const std::filesystem::path& dir,
                                           const std::vector<std::shared_ptr<segment>>& segments,
                                           const std::string& log_name) {
  const offset log_start = segments.front()->base_offset();
  const offset log_end = segments.back()->next_offset();
  if (auto s = delete_producer_snapshots_after(dir, log_end); !s) return s.err();
  auto ends = list_producer_snapshots(dir);
  if (!ends) return ends.err();
  producer_state state;
  offset from = log_start;
  for (auto it = ends->rbegin(); it != ends->rend(); ++it) {
    const auto file = dir / producer_snapshot_name(*it);
    auto read = read_producer_snapshot(file);
    if (read) {
      state = std::move(*read);
      from = std::max(from, *it);
      break;
    }
    if (read.code() != errc::corrupt_message) return read.err();
    spdlog::warn("{}: ignoring damaged producer snapshot ({}); rebuilding from an older one or the "
                 "log",
                 log_name, read.err().message);
    if (auto s = remove_file(file); !s) return s.err();
  }
  if (auto s = scan_producers(segments, from, state); !s) return s.err();
  state.set_end_offset(log_end);
  return state;
}

status delete_producer_snapshots_after(const std::filesystem::path& dir, offset end) {
  return delete_snapshots_unless(dir, [end](offset at, bool) { return at <= end; });
}

status delete_producer_snapshots_before(const std::filesystem::path& dir, offset log_start) {
  return delete_snapshots_unless(
      dir, [log_start](offset at, bool newest) { return newest || at >= log_start; });
}

status delete_all_producer_snapshots(const std::filesystem::path& dir) {
  return delete_snapshots_unless(dir, [](offset, bool) { return false; });
}

} // namespace capstan
