#pragma once

// The controller's side of schema/replication.capnp: LeaderAndIsr, StopReplica and UpdateMetadata
// frames built from control_messages and the image, and AlterPartition read into a request
// (partition_decisions.hpp) and answered.

#include <cstdint>
#include <vector>

#include "actors/controller/metadata/control_messages.hpp"
#include "actors/controller/metadata/metadata_image.hpp"
#include "actors/controller/metadata/partition_decisions.hpp"
#include "runtime/messages/capnp_frame.hpp"
#include "runtime/result.hpp"

namespace capstan::controller {

// Who sends: receivers refuse a controller epoch below the newest they have seen.
struct controller_stamp {
  node_id controller;
  int32_t epoch = 0;
};

// LeaderAndIsr of control.leader_and_isr with control.leaders.
capnp_frame leader_and_isr_frame(const node_control& control, controller_stamp stamp);

// StopReplica with deletePartitions of control.stop_and_delete.
capnp_frame stop_replica_frame(const node_control& control, controller_stamp stamp);

// UpdateMetadata of the whole image: the unfenced nodes (with their client hosts), every topic
// with its configs, every partition's state.
capnp_frame update_metadata_frame(const metadata_image& image, controller_stamp stamp);

// Reads a leader's AlterPartition. Never throws; CORRUPT_MESSAGE for an empty or malformed frame,
// a negative node id, partition or epoch, or a topic id that is neither empty (then all zeros:
// find the topic by name) nor 16 bytes.
result<alter_partition_request> decode_alter_partition(const capnp_frame& frame);

// AlterPartitionResponse: per partition its error code and message, and for accepted ones the
// committed state (answer_alter_partition).
capnp_frame alter_partition_response_frame(const std::vector<alter_partition_result>& results);

} // namespace capstan::controller
