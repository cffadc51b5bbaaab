#include "runtime/storage/epoch_scan.hpp"

#include "runtime/batch/record_batch_format.hpp"
#include "runtime/batch/record_batch_view.hpp"

namespace capstan {

namespace {

constexpr size_t scan_chunk_bytes = size_t{1} << 20;

} // namespace

result<bool> scan_epochs(const std::vector<std::shared_ptr<segment>>& segments, offset from,
                         leader_epoch_cache& cache) {
  namespace bf = batch_format;
  bool changed = false;
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
        const leader_epoch epoch{bf::load_be<int32_t>(h + bf::partition_leader_epoch_at)};
        changed |= cache.assign(epoch, base);
        pos = base + bf::load_be<int32_t>(h + bf::last_offset_delta_at) + 1;
        at = bf::align_up(at + *size);
      }
      if (pos <= slice->first_offset) break; // no whole batch in the chunk: nothing to learn
    }
  }
  return changed;
}

} // namespace capstan
