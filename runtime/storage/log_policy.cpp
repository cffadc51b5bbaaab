#include "runtime/storage/log_policy.hpp"

#include <cstdint>
#include <limits>

namespace capstan {

bool should_roll(const segment_meta& active, int64_t batch_bytes, offset last, timestamp_ms now,
                 const log_config& config) {
  if (active.size_bytes == 0) return false;
  if (active.size_bytes + batch_bytes > config.segment_bytes) return true;
  if (now - active.created_ms >= config.segment_ms) return true;
  return last - active.base > std::numeric_limits<int32_t>::max();
}

size_t segments_to_delete(const std::vector<segment_meta>& segments, timestamp_ms now,
                          const log_config& config) {
  if (segments.size() < 2) return 0;
  const size_t sealed = segments.size() - 1;
  size_t n = 0;
  if (config.retention_ms >= 0) {
    while (n < sealed && segments[n].max_timestamp != no_timestamp &&
           segments[n].max_timestamp < now - config.retention_ms)
      ++n;
  }
  if (config.retention_bytes >= 0) {
    int64_t total = 0;
    for (size_t i = n; i < segments.size(); ++i) total += segments[i].size_bytes;
    while (n < sealed && total - segments[n].size_bytes >= config.retention_bytes) {
      total -= segments[n].size_bytes;
      ++n;
    }
  }
  return n;
}

bool should_compact(const std::vector<segment_meta>& segments, offset cleaned_upto,
                    const log_config& config) {
  if (config.cleanup != cleanup_policy::compact || segments.size() < 2) return false;
  int64_t total = 0;
  int64_t dirty = 0;
  for (size_t i = 0; i + 1 < segments.size(); ++i) {
    total += segments[i].size_bytes;
    if (segments[i].next > cleaned_upto) dirty += segments[i].size_bytes;
  }
  return dirty > 0 && static_cast<double>(dirty) >= config.min_cleanable_dirty_ratio * total;
}

} // namespace capstan
