#pragma once

// What the controller sends after a change: a pure function of the image before and after it.
// Per node, the LeaderAndIsr partition states that changed among the partitions it hosts (with
// the endpoints of the leaders they name) and the replicas it must stop and delete; and whether
// every node needs a new UpdateMetadata. control_frames.hpp turns these into
// schema/replication.capnp frames.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "actors/controller/metadata/metadata_image.hpp"

namespace capstan::controller {

// One partition's state as LeaderAndIsr and UpdateMetadata carry it (PartitionState).
struct partition_control_state {
  std::string topic;
  topic_id id{};
  partition_id partition;
  node_id leader = no_leader;
  capstan::leader_epoch leader_epoch{0};
  std::vector<node_id> isr;
  controller::partition_epoch partition_epoch{0};
  std::vector<node_id> replicas;

  bool operator==(const partition_control_state&) const = default;
};

// NodeEndpoint. The schema has one host per node: LeaderAndIsr carries the cluster host (a
// follower reaches its leader there), UpdateMetadata the client host (the gateway answers
// clients with it).
struct node_endpoint {
  node_id id;
  std::string host;
  uint16_t client_port = 0;
  uint16_t cluster_port = 0;
  std::string rack;

  bool operator==(const node_endpoint&) const = default;
};

struct stop_replica_partition {
  std::string topic;
  topic_id id{};
  partition_id partition;
  // epoch_during_delete for a deleted topic; the current leader epoch for a replica moved away.
  capstan::leader_epoch leader_epoch{0};

  bool operator==(const stop_replica_partition&) const = default;
};

struct node_control {
  // LeaderAndIsr: partitions the node hosts whose state is new or changed.
  std::vector<partition_control_state> leader_and_isr;
  // The cluster endpoints of the (registered) leaders named above, ascending by id.
  std::vector<node_endpoint> leaders;
  // StopReplica with delete: replicas of removed topics, and replicas moved off the node.
  std::vector<stop_replica_partition> stop_and_delete;

  bool empty() const { return leader_and_isr.empty() && stop_and_delete.empty(); }
  bool operator==(const node_control&) const = default;
};

struct control_plan {
  // Only registered nodes with something to receive.
  std::map<node_id, node_control> nodes;
  // True when the set of nodes (registration, fencing, endpoints) or any topic, partition or
  // config changed: every node then needs update_metadata_frame(after).
  bool update_metadata = false;
};

// Topics are matched by id, so a topic deleted and created again under its name is a removal
// (StopReplica) plus new partitions (LeaderAndIsr).
control_plan plan_control_messages(const metadata_image& before, const metadata_image& after);

// Everything `node` hosts, for a newly active controller or a node that just registered:
// LeaderAndIsr for all its partitions, no StopReplica.
node_control full_control_messages(const metadata_image& image, node_id node);

} // namespace capstan::controller
