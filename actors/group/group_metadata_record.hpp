#pragma once

// Kafka's GroupMetadata record of __consumer_offsets, in Kafka's byte layout
// (record_fields.hpp), so that a new coordinator knows a group's last generation:
//   key   = int16 version 2, string group
//   value = int16 version 3, string protocol type, int32 generation, nullable string protocol,
//           nullable string leader, int64 state timestamp, int32 member count, then per member:
//           string member id, nullable string group instance id, string client id,
//           string client host, int32 rebalance timeout ms, int32 session timeout ms,
//           bytes subscription, bytes assignment
// Values of Kafka's versions 0 to 2 are read too (0: no rebalance timeout, which then is the
// session timeout; before 2: no state timestamp; before 3: no instance id). A null value is a
// tombstone: the group is gone.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/result.hpp"
#include "runtime/types.hpp"

namespace capstan {

struct group_metadata_member {
  std::string member_id;
  std::string group_instance_id;
  std::string client_id;
  std::string client_host;
  int32_t rebalance_timeout_ms = 0;
  int32_t session_timeout_ms = 0;
  // The member's metadata for the group's protocol, and what the leader assigned it.
  bytes subscription;
  bytes assignment;
  bool operator==(const group_metadata_member&) const = default;
};

struct group_metadata_value {
  std::string protocol_type;
  int32_t generation = 0;
  std::string protocol_name;
  std::string leader;
  timestamp_ms state_timestamp = no_timestamp;
  std::vector<group_metadata_member> members;
  bool operator==(const group_metadata_value&) const = default;
};

// REQUIRES: every string at most max_record_string_bytes long.
bytes encode_group_metadata_key(std::string_view group);
bytes encode_group_metadata_value(const group_metadata_value& value);

// The group of a version-2 key; nullopt for an offset commit's key (versions 0 and 1).
// CORRUPT_MESSAGE when the bytes are truncated, have trailing bytes or an unknown version.
result<std::optional<std::string>> decode_group_metadata_key(bytes_view data);
result<group_metadata_value> decode_group_metadata_value(bytes_view data);

} // namespace capstan
