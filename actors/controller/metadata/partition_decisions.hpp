#pragma once

// Decisions about partitions (decision.hpp): a leader's AlterPartition, and preferred leader
// election (periodic with auto.leader.rebalance.enable, or on demand from
// `capstan cluster elect-leaders`).

#include <optional>
#include <string>
#include <vector>

#include "actors/controller/metadata/decision.hpp"
#include "actors/controller/metadata/metadata_image.hpp"
#include "actors/replica/control_codec.hpp"
#include "runtime/result.hpp"

namespace capstan::controller {

struct alter_partition_decision {
  // The PartitionChange of every accepted item whose ISR differs.
  decision changes;
  // Per item, in request order: none when accepted, else why not.
  std::vector<error> outcomes;
};

// KRaft's alterPartition of a leader's request (actors/replica/control_codec), item by item,
// checked in its order:
// - UNKNOWN_TOPIC_OR_PARTITION: no such topic (by id; by name when the id is all zeros) or
//   partition;
//   INCONSISTENT_TOPIC_ID: the id names another topic than the name;
// - INVALID_REQUEST: the partition appears twice in the request;
// - NOT_CONTROLLER: a leader or partition epoch above the image's (this controller is behind);
// - FENCED_LEADER_EPOCH: a leader epoch below the current one;
// - NOT_LEADER_OR_FOLLOWER: the sender is not the current leader (KRaft: INVALID_REQUEST);
// - INVALID_UPDATE_VERSION: a partition epoch below the current one;
// - INVALID_REQUEST: an ISR without the leader, with a node that is not a replica, or twice;
// - INELIGIBLE_REPLICA: an ISR member that is fenced or not registered.
// An accepted item changes the ISR and bumps the partition epoch; the leader epoch stays, unless
// the new ISR completes a reassignment (reassignment_decisions.hpp) that moves the leader off.
alter_partition_decision alter_partition(const metadata_image& image,
                                         const alter_partition_msg& request);

// The answer, read from `committed` once the decision's records are applied (at once when there
// were none): each accepted item gets its partition's committed state, which may differ from
// what the leader asked if another change landed first; a refused item its error. An accepted
// partition that no longer exists is UNKNOWN_TOPIC_OR_PARTITION. A refused item carries no
// state (leader -1).
alter_partition_response_msg answer_alter_partition(const metadata_image& committed,
                                                    const alter_partition_msg& request,
                                                    const std::vector<error>& outcomes);

struct partition_ref {
  std::string topic;
  partition_id partition;

  bool operator==(const partition_ref&) const = default;
};

struct preferred_election_result {
  partition_ref partition;
  error outcome; // none: elected
};

struct preferred_election {
  decision changes;
  std::vector<preferred_election_result> results;
};

// Kafka's preferred leader election for `partitions`, or every partition when nullopt: a
// partition whose preferred replica (the first) is unfenced and in the ISR but not the leader gets
// it as leader (leader and partition epoch bumped). Results per partition considered:
// ELECTION_NOT_NEEDED when the preferred replica leads already, PREFERRED_LEADER_NOT_AVAILABLE
// when it is fenced or out of the ISR, UNKNOWN_TOPIC_OR_PARTITION. (Kafka's ZooKeeper controller
// only rebalanced a node past leader.imbalance.per.broker.percentage; like KRaft, this elects
// every partition that can.)
preferred_election elect_preferred_leaders(const metadata_image& image,
                                           const std::optional<std::vector<partition_ref>>& partitions);

// The partitions the periodic rebalance (auto.leader.rebalance.enable) elects, as Kafka's
// checkAndTriggerAutoLeaderRebalance picks them: for each unfenced node, the partitions it is
// the preferred replica of but does not lead; all of them when they are more than
// `imbalance_percentage` percent (leader.imbalance.per.broker.percentage) of the partitions it is
// preferred for, none otherwise. Whether each can be elected is elect_preferred_leaders' to say.
std::vector<partition_ref> imbalanced_partitions(const metadata_image& image,
                                                 int32_t imbalance_percentage);

} // namespace capstan::controller
