#pragma once

// The vocabulary of the controller's metadata (docs/controller.md, "Metadata records and
// decisions"): broker and partition epochs as strong types beside the cluster's node ids and
// leader epochs (runtime/types.hpp), and the markers Kafka uses.

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "runtime/cluster/metadata.hpp"
#include "runtime/types.hpp"

namespace capstan::controller {

// One registration of a node; a new registration gets an epoch above every earlier one, so a
// heartbeat or fencing of an older process is recognised as stale (KRaft's broker epoch).
using broker_epoch = strong<int64_t, struct broker_epoch_tag>;
// Bumped by every change to a partition's leader, ISR or replicas (KIP-497); AlterPartition
// names the one it builds on.
using partition_epoch = strong<int32_t, struct partition_epoch_tag>;
// 16 random bytes a node draws at every start: a second process with the same node id has
// another one.
using incarnation_id = std::array<uint8_t, 16>;

inline constexpr node_id no_leader{-1};
// Kafka's EpochDuringDelete: a StopReplica that deletes whatever the replica's epoch.
inline constexpr leader_epoch epoch_during_delete{-2};

// Epochs a record may carry: [0, max). The maximum itself is refused so that a decision's "+ 1"
// never overflows; a record that would reach it fails to apply instead.
inline constexpr int32_t max_partition_epochs = std::numeric_limits<int32_t>::max();
inline constexpr int64_t max_broker_epochs = std::numeric_limits<int64_t>::max();

constexpr leader_epoch next(leader_epoch e) { return leader_epoch{e.value() + 1}; }
constexpr partition_epoch next(partition_epoch e) { return partition_epoch{e.value() + 1}; }
constexpr broker_epoch next(broker_epoch e) { return broker_epoch{e.value() + 1}; }

// "[1,2,3]" for log lines and error messages.
std::string to_string(const std::vector<node_id>& nodes);

} // namespace capstan::controller
