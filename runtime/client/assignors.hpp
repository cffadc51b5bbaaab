#pragma once

// The partition assignors a group leader runs (partition.assignment.strategy), as Kafka's:
//   range               per topic, consecutive ranges to the members sorted by id; the first
//                       (partitions % members) get one more;
//   roundrobin          every subscribed partition, sorted, dealt in turn to the members that
//                       subscribe to its topic;
//   cooperative-sticky  members keep what they own where balance allows; a partition that moves
//                       is left out of this generation, so its owner revokes it and rejoins, and
//                       the next generation gives it to its new member (KIP-429): partitions that
//                       do not move are never revoked.
// Plain functions of the members' subscriptions and the partition counts (docs/groups.md,
// "Assignors").

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/group/consumer_protocol.hpp"

namespace capstan::client {

struct assignor_member {
  std::string member_id;
  // Static members sort by it, so that a restart with a new member id keeps their partitions.
  std::string group_instance_id;
  consumer_subscription subscription;
};

// Partitions per topic; a topic the cluster does not have is absent.
using partition_counts = std::map<std::string, int32_t>;
// By member id: what each member is given (every member present, possibly with nothing).
using group_assignment = std::map<std::string, topic_partitions>;

// eager: every member revokes everything before it joins; cooperative: members keep their
// partitions across a rebalance and revoke only what the assignment takes away.
enum class rebalance_protocol { eager, cooperative };

struct assignor {
  std::string_view name;
  rebalance_protocol protocol;
  group_assignment (*assign)(const std::vector<assignor_member>& members, const partition_counts& counts);
};

// nullptr for a name no assignor has.
const assignor* find_assignor(std::string_view name);
// "range, roundrobin, cooperative-sticky", for help and error texts.
std::string assignor_names();

group_assignment assign_range(const std::vector<assignor_member>& members, const partition_counts& counts);
group_assignment assign_roundrobin(const std::vector<assignor_member>& members, const partition_counts& counts);
group_assignment assign_cooperative_sticky(const std::vector<assignor_member>& members,
                                           const partition_counts& counts);

} // namespace capstan::client
