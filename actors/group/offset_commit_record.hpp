#pragma once

// The records of __consumer_offsets, in Kafka's own byte layout (docs/replication.md,
// "__consumer_offsets records"), so a Kafka tool could read our topic and we could read Kafka's:
//   key   = int16 version (0 or 1: an offset commit; 2 is group metadata, group_metadata_record.hpp)
//           string group, string topic, int32 partition
//   value = int16 version 3, int64 offset, int32 leader epoch (-1: unknown),
//           string metadata, int64 commit timestamp
// A string is an int16 length and that many UTF-8 bytes; every integer is big-endian. Values of
// versions 0..2 (Kafka's older layouts) are read too. A null value is a tombstone.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/group/record_fields.hpp"
#include "runtime/result.hpp"
#include "runtime/types.hpp"

namespace capstan {

// Kafka's offset.metadata.max.bytes default; longer metadata is refused at commit.
inline constexpr size_t max_offset_metadata_bytes = 4096;

struct offset_commit_key {
  std::string group;
  std::string topic;
  int32_t partition = 0;
  bool operator==(const offset_commit_key&) const = default;
};

struct offset_commit_value {
  int64_t offset = -1;
  int32_t leader_epoch = -1;
  std::string metadata;
  timestamp_ms commit_timestamp = no_timestamp;
  bool operator==(const offset_commit_value&) const = default;
};

// REQUIRES: group and topic are at most max_record_string_bytes long.
bytes encode_offset_commit_key(const offset_commit_key& key);
// REQUIRES: metadata is at most max_record_string_bytes long.
bytes encode_offset_commit_value(const offset_commit_value& value);

// nullopt for a key of another record type (group metadata). CORRUPT_MESSAGE when the bytes are
// truncated, have trailing bytes, or carry an unknown version.
result<std::optional<offset_commit_key>> decode_offset_commit_key(bytes_view data);
result<offset_commit_value> decode_offset_commit_value(bytes_view data);

// The __consumer_offsets partition that holds `group`'s commits, as Kafka picks it:
// abs(java String.hashCode(group)) % partitions (stable across runs and builds).
// REQUIRES: partitions >= 1.
int32_t offsets_partition_for(std::string_view group, int32_t partitions);

} // namespace capstan
