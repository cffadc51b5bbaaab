#pragma once

// The requests and answers of Kafka's classic group protocol as capstan's coordinator and client
// library exchange them (schema/client.capnp: joinGroup, syncGroup, heartbeat, leaveGroup; the
// member identity in commitOffsets). The coordinator treats protocol metadata and assignments as
// opaque bytes: their meaning is the client's (docs/groups.md, "Membership").

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/errc.hpp"
#include "runtime/types.hpp"

namespace capstan {

struct group_protocol {
  std::string name;
  bytes metadata;
  bool operator==(const group_protocol&) const = default;
};

struct join_group_request {
  // Empty on a member's first join: the answer is MEMBER_ID_REQUIRED with the id to join with
  // (KIP-394), unless group_instance_id names a static member.
  std::string member_id;
  // Non-empty: a static member (KIP-345), which keeps its partitions across a restart that
  // comes back within its session timeout.
  std::string group_instance_id;
  std::string client_id;
  int32_t session_timeout_ms = 0;
  int32_t rebalance_timeout_ms = 0;
  std::string protocol_type;
  std::vector<group_protocol> protocols;
};

struct group_member_metadata {
  std::string member_id;
  std::string group_instance_id;
  bytes metadata;
  bool operator==(const group_member_metadata&) const = default;
};

struct join_group_response {
  errc error = errc::none;
  std::string message;
  int32_t generation = -1;
  std::string protocol_name;
  std::string leader;
  std::string member_id;
  // Every member with its metadata for the chosen protocol: for the leader only.
  std::vector<group_member_metadata> members;
};

struct member_assignment {
  std::string member_id;
  bytes assignment;
};

struct sync_group_request {
  std::string member_id;
  std::string group_instance_id;
  int32_t generation = -1;
  // The leader's assignment for every member; empty from the others.
  std::vector<member_assignment> assignments;
};

struct sync_group_response {
  errc error = errc::none;
  std::string message;
  bytes assignment;
};

// Who a heartbeat, a leave or an offset commit comes from.
struct group_member_ref {
  std::string member_id;
  std::string group_instance_id;
  int32_t generation = -1;
};

// A group as its coordinator describes it (Kafka's DescribeGroups): its state by Kafka's name
// ("Stable", "Empty", ...; "Dead" for a group the coordinator knows nothing of), and each member
// with what it was assigned.
struct group_member_summary {
  std::string member_id;
  std::string group_instance_id;
  std::string client_id;
  bytes assignment;
};

struct group_summary {
  std::string state;
  std::string protocol_type;
  std::string protocol_name;
  int32_t generation = 0;
  std::string leader;
  std::vector<group_member_summary> members;
};

} // namespace capstan
