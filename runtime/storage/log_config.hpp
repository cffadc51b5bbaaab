#pragma once

// Per-partition log settings, named and defaulted as Kafka's topic configs (docs/configuration.md
// lists each). Durations in milliseconds, sizes in bytes; -1 means "no limit" where Kafka says so.

#include <cstdint>
#include <limits>
#include <map>
#include <string>

#include "runtime/result.hpp"

namespace capstan {

enum class cleanup_policy { delete_segments, compact };

struct log_config {
  int64_t segment_bytes = 1073741824;           // segment.bytes
  int64_t segment_ms = 604800000;               // segment.ms (7 days)
  int64_t retention_ms = 604800000;             // retention.ms (-1: keep forever)
  int64_t retention_bytes = -1;                 // retention.bytes (-1: no size limit)
  int64_t index_interval_bytes = 4096;          // index.interval.bytes
  int64_t max_message_bytes = 1048588;          // max.message.bytes (largest batch accepted)
  int64_t flush_messages = std::numeric_limits<int64_t>::max(); // flush.messages
  int64_t flush_ms = std::numeric_limits<int64_t>::max();       // flush.ms
  cleanup_policy cleanup = cleanup_policy::delete_segments;     // cleanup.policy
  int64_t delete_retention_ms = 86400000;       // delete.retention.ms (tombstone lifetime)
  double min_cleanable_dirty_ratio = 0.5;       // min.cleanable.dirty.ratio
  // Broker-level schedules (log.retention.check.interval.ms, log.cleaner.backoff.ms).
  int64_t retention_check_interval_ms = 300000;
  int64_t cleaner_backoff_ms = 15000;

  // Applies "name=value" overrides with Kafka's names. Unknown names and out-of-range or
  // unparsable values are INVALID_CONFIG naming the key.
  static result<log_config> from_map(const std::map<std::string, std::string>& values,
                                     log_config base);
  static result<log_config> from_map(const std::map<std::string, std::string>& values) {
    return from_map(values, log_config{});
  }
  // Kafka names and current values, for describeConfigs and docs.
  std::map<std::string, std::string> to_map() const;
};

} // namespace capstan
