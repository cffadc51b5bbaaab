#pragma once

// Decisions about moving a partition's replicas (decision.hpp), as KRaft's
// alterPartitionReassignments does it (KIP-455): the replica set first grows to the target plus
// the replicas leaving, the new replicas catch up as followers and join the ISR through their
// leader's AlterPartition, and once every target replica is in the ISR the leaving ones are
// dropped (the controller's StopReplica deletes their logs). The data is never on fewer in-sync
// replicas than before while it moves. docs/operations.md, "Replacing a node", says how an
// operator uses it.

#include <optional>
#include <vector>

#include "actors/controller/metadata/decision.hpp"
#include "actors/controller/metadata/metadata_image.hpp"
#include "actors/controller/metadata/partition_decisions.hpp"

namespace capstan::controller {

// One partition of an AlterPartitionReassignments: its target replicas, the first the preferred
// leader; nullopt cancels the reassignment it runs.
struct reassignment_target {
  partition_ref partition;
  std::optional<std::vector<node_id>> replicas;
};

struct reassignment_decision {
  decision changes;
  // One per target, in request order; none: started (or, when nothing had to move, done).
  std::vector<preferred_election_result> results;
};

// Per target, checked in this order:
// - UNKNOWN_TOPIC_OR_PARTITION: no such topic or partition;
// - INVALID_REQUEST: the partition appears twice in the request;
// - INVALID_REPLICA_ASSIGNMENT: target replicas that are empty, list a node twice, or name a
//   node that is not registered;
// - NO_REASSIGNMENT_IN_PROGRESS: a cancel of a partition that runs none;
// - INVALID_REPLICA_ASSIGNMENT: a cancel that would leave no ISR member (every replica in the ISR
//   is one the reassignment added).
// A target replaces a reassignment that runs already (as Kafka's does): the replica set becomes
// the target followed by the replicas not in it, which are the ones removing; the target's new
// ones are adding. When every target replica is in the ISR already (a new order, fewer
// replicas), it completes at once (complete_reassignment). A cancel goes back to the replicas
// without the adding ones, keeping the ISR members among them and the leader if it is one, else
// electing one by the election rules.
reassignment_decision alter_reassignments(const metadata_image& image,
                                          const std::vector<reassignment_target>& targets);

// `change` (nullopt: none) to `current`, extended so that a running reassignment whose target
// replicas are all in the ISR the change leaves completes in the same record: the replicas become
// the target, the ISR keeps only target replicas, and a leader outside the target gives way to
// the first target replica in the ISR that is unfenced in `image` (none unfenced: offline).
// Unchanged when no reassignment runs or a target replica is still outside the ISR.
std::optional<partition_change_record> complete_reassignment(
  const metadata_image& image, const topic_id& topic, partition_id p,
  const partition_state& current, std::optional<partition_change_record> change);

} // namespace capstan::controller
