#pragma once

// Per-partition log settings, named and defaulted as Kafka's topic configs (docs/configuration.md
// lists each). Durations in milliseconds, sizes in bytes; -1 means "no limit" where Kafka says so.

#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "runtime/result.hpp"

namespace capstan {

// cleanup.policy: delete (retention), compact, or both ("compact,delete": compacted, and
// segments past retention deleted too, as Kafka does for such topics).
enum class cleanup_policy { delete_segments, compact, compact_delete };

// Which names from_map takes: a topic's configs (createTopic, alterConfigs), or a broker's
// defaults, which add the broker-wide schedules a client must not set.
enum class config_scope { topic, broker };

// The shortest background schedule a log keeps: log.retention.check.interval.ms and
// log.cleaner.backoff.ms below it are refused, and the log's timer never fires more often (so
// flush.ms below it acts at this granularity). Each partition runs its own timer, so a smaller
// value multiplies by the partition count on an idle node. Capstan's own floor: Kafka accepts 1
// and 0, and runs one timer per broker.
inline constexpr int64_t min_schedule_interval_ms = 1000;

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
  // message.timestamp.before.max.ms / after.max.ms (KIP-937): how far a produced record's
  // CreateTime may lie behind or ahead of the leader's clock. Kafka 4.0's defaults: any past
  // time, at most one hour ahead (KIP-1030).
  int64_t timestamp_before_max_ms = std::numeric_limits<int64_t>::max();
  int64_t timestamp_after_max_ms = 3600000;
  // Broker-level schedules (log.retention.check.interval.ms, log.cleaner.backoff.ms); not topic
  // configs.
  int64_t retention_check_interval_ms = 300000;
  int64_t cleaner_backoff_ms = 15000;
  // producer.id.expiration.ms, a broker config in Kafka too: how long an idempotent producer's
  // state outlives its last batch (docs/idempotence.md). Kafka's default, one day.
  int64_t producer_id_expiration_ms = 86400000;

  // Applies "name=value" overrides with Kafka's names. Unknown names (in topic scope, the broker
  // schedules too) and out-of-range or unparsable values are INVALID_CONFIG naming the key.
  static result<log_config> from_map(const std::map<std::string, std::string>& values,
                                     log_config base, config_scope scope = config_scope::topic);
  static result<log_config> from_map(const std::map<std::string, std::string>& values) {
    return from_map(values, log_config{});
  }
  // Every name from_map takes in `scope`.
  static std::set<std::string> known_keys(config_scope scope);
  // The topic configs' Kafka names and current values, for describeConfigs and docs.
  std::map<std::string, std::string> to_map() const;

  // Whether cleanup.policy names compact (the log is compacted; records need keys), and whether
  // it names delete (retention deletes old segments).
  bool compacts() const { return cleanup != cleanup_policy::delete_segments; }
  bool deletes() const { return cleanup != cleanup_policy::compact; }
};

} // namespace capstan
