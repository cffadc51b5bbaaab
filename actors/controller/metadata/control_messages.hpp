#pragma once

// What the controller sends after a change: a pure function of the image before and after it.
// Per node, the LeaderAndIsr partition states that changed among the partitions it hosts (with
// the endpoints of the leaders they name) and the replicas it must stop and delete; and whether
// every node needs a new UpdateMetadata. The parts are actors/replica/control_codec's messages,
// which both the controller and the replica managers encode and decode.

#include <cstdint>
#include <map>
#include <vector>

#include "actors/controller/metadata/metadata_image.hpp"
#include "actors/replica/control_codec.hpp"

namespace capstan::controller {

struct node_control {
  // LeaderAndIsr: partitions the node hosts whose state is new or changed.
  std::vector<partition_state_msg> leader_and_isr;
  // The endpoints of the (registered) leaders named above, ascending by id. The schema has one
  // host per node: here the cluster host, where a follower reaches its leader.
  std::vector<node_endpoint_msg> leaders;
  // StopReplica with delete: replicas of removed topics (epoch_during_delete), and replicas moved
  // off the node (the current leader epoch).
  std::vector<stop_partition_msg> stop_and_delete;

  bool empty() const { return leader_and_isr.empty() && stop_and_delete.empty(); }
};

struct control_plan {
  // Only registered nodes with something to receive.
  std::map<node_id, node_control> nodes;
  // True when the set of nodes (registration, fencing, endpoints) or any topic, partition or
  // config changed: every node then needs update_metadata_delta(before, after, ...).
  bool update_metadata = false;
};

// Topics are matched by id, so a topic deleted and created again under its name is a removal
// (StopReplica) plus new partitions (LeaderAndIsr).
control_plan plan_control_messages(const metadata_image& before, const metadata_image& after);

// Everything `node` hosts, for a newly active controller or a node that just registered:
// LeaderAndIsr for all its partitions, no StopReplica.
node_control full_control_messages(const metadata_image& image, node_id node);

// Who sends: receivers refuse a controller epoch below the newest they have seen.
struct controller_stamp {
  node_id controller;
  int32_t epoch = 0;
};

// LeaderAndIsr of control.leader_and_isr with control.leaders.
leader_and_isr_msg leader_and_isr(const node_control& control, controller_stamp stamp);

// StopReplica with delete_partitions of control.stop_and_delete.
stop_replica_msg stop_replica(const node_control& control, controller_stamp stamp);

// UpdateMetadata of the whole image (full): the unfenced nodes (with their client hosts, which
// the gateway answers clients with), every topic with its configs, every partition's state.
update_metadata_msg update_metadata(const metadata_image& image, controller_stamp stamp);

// UpdateMetadata of what changed from `before` to `after` (not full): the unfenced nodes of
// `after`, the topics that are new or whose configs changed, the partition states that are new
// or changed, and the ids of removed topics. Its size follows the change, not the image.
update_metadata_msg update_metadata_delta(const metadata_image& before, const metadata_image& after,
                                          controller_stamp stamp);

} // namespace capstan::controller
