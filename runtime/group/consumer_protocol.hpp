#pragma once

// Kafka's consumer protocol (protocol type "consumer"): the bytes a consumer puts in its
// JoinGroup protocol metadata (a subscription) and the group leader in each SyncGroup assignment.
// The coordinator never reads them; capstan's consumers, the groups CLI and any Kafka consumer in
// the same group do (docs/groups.md, "The consumer protocol"). The layout is Kafka's
// ConsumerProtocolSubscription and ConsumerProtocolAssignment: an int16 version, then the
// fields, each version appending to the one before, so a newer version reads as the newest one
// known here.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/result.hpp"
#include "runtime/types.hpp"

namespace capstan {

inline constexpr std::string_view consumer_protocol_type = "consumer";

// Partitions by topic, each list sorted.
using topic_partitions = std::map<std::string, std::vector<int32_t>>;

struct consumer_subscription {
  std::vector<std::string> topics;
  bytes user_data;
  // What the member owns now (v1): cooperative assignors keep it where they can.
  topic_partitions owned;
  // The generation `owned` is from (v2; -1: unknown), so that an assignor can tell a stale claim
  // from a current one.
  int32_t generation = -1;
  bool operator==(const consumer_subscription&) const = default;
};

struct consumer_assignment {
  topic_partitions partitions;
  bytes user_data;
  bool operator==(const consumer_assignment&) const = default;
};

// Writes version 2 (topics, user data, owned partitions, generation).
bytes encode_subscription(const consumer_subscription& s);
// Reads versions 0 to 3 and newer ones as 3. INCONSISTENT_GROUP_PROTOCOL for bytes that are
// not a subscription.
result<consumer_subscription> decode_subscription(bytes_view data);

// Whether two subscriptions ask the same of an assignor: the same topics and user data. What
// a member owns, and from which generation, is its state rather than its request: a static
// member back after a restart owns nothing yet. Bytes that are not a subscription compare as
// bytes.
bool same_subscription(bytes_view a, bytes_view b);

// Writes version 0, which every later version reads the same.
bytes encode_assignment(const consumer_assignment& a);
// INCONSISTENT_GROUP_PROTOCOL for bytes that are not an assignment; empty bytes are an empty
// assignment (what a coordinator answers a member the leader left out).
result<consumer_assignment> decode_assignment(bytes_view data);

} // namespace capstan
