#include "runtime/storage/log_policy.hpp"

#include <algorithm>
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
  // Kafka deletes by retention only when cleanup.policy contains delete.
  if (!config.deletes() || segments.size() < 2) return 0;
  const size_t sealed = segments.size() - 1;
  size_t n = 0;
  if (config.retention_ms >= 0) {
    timestamp_ms horizon = 0;
    if (__builtin_sub_overflow(now, config.retention_ms, &horizon))
      horizon = std::numeric_limits<timestamp_ms>::min();
    // Kafka ages a segment without timestamps (its records carry -1, or less) by its file's
    // last-modified time; a sealed segment was last written before the next one was created.
    auto newest = [&segments](size_t i) {
      return segments[i].max_timestamp >= 0 ? segments[i].max_timestamp : segments[i + 1].created_ms;
    };
    while (n < sealed && segments[n].size_bytes > 0 && newest(n) < horizon) ++n;
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

int64_t background_interval_ms(const log_config& config) {
  const int64_t shortest =
    std::min({config.retention_check_interval_ms, config.flush_ms, config.cleaner_backoff_ms});
  return std::clamp<int64_t>(shortest, min_schedule_interval_ms, 60000);
}

bool should_compact(const std::vector<segment_meta>& segments, offset cleaned_upto,
                    const log_config& config) {
  if (!config.compacts() || segments.size() < 2) return false;
  int64_t total = 0;
  int64_t dirty = 0;
  for (size_t i = 0; i + 1 < segments.size(); ++i) {
    total += segments[i].size_bytes;
    if (segments[i].next > cleaned_upto) dirty += segments[i].size_bytes;
  }
  return dirty > 0 && static_cast<double>(dirty) >= config.min_cleanable_dirty_ratio * total;
}

} // namespace capstan
