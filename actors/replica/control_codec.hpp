#pragma once

// The controller's requests to nodes (LeaderAndIsr, UpdateMetadata, StopReplica) and a leader's
// AlterPartition, with their responses (schema/replication.capnp), to and from plain values. The
// controller encodes what replica managers decode and the other way round, so both ends share
// these functions. Decoding checks what a peer could get wrong (names, ids, epochs, list sizes)
// and returns CORRUPT_MESSAGE or INVALID_REQUEST; it never throws.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/cluster/metadata.hpp"
#include "runtime/errc.hpp"
#include "runtime/messages/capnp_frame.hpp"
#include "runtime/result.hpp"
#include "runtime/storage/offset_checkpoint.hpp"

namespace capstan {

struct partition_state_msg {
  topic_partition tp;
  topic_id id{};
  node_id leader{-1};
  leader_epoch epoch{0};
  std::vector<node_id> isr;
  int32_t partition_epoch = 0;
  std::vector<node_id> replicas;
  std::vector<node_id> wiped; // for describe only (schema/replication.capnp)
  friend bool operator==(const partition_state_msg&, const partition_state_msg&) = default;
};

// Whether a replica that acted on leader epoch `epoch` at partition epoch `partition_epoch` takes
// the controller's state `p`: only a newer leader epoch, or a newer partition epoch (an ISR
// change) of the same one. Anything else is the same state again or an older one.
inline bool supersedes(const partition_state_msg& p, leader_epoch epoch, int32_t partition_epoch) {
  return p.epoch > epoch || (p.epoch == epoch && p.partition_epoch > partition_epoch);
}

struct node_endpoint_msg {
  node_id node{0};
  std::string host;
  uint16_t client_port = 0;
  uint16_t cluster_port = 0;
  std::string rack;
  // The Kafka listener clients are sent to (advertised.listeners); port 0: the node has none.
  std::string kafka_host{};
  uint16_t kafka_port = 0;
  friend bool operator==(const node_endpoint_msg&, const node_endpoint_msg&) = default;
};

// `sequence` on the controller's messages: their place in the controller's stream to one node
// (schema/replication.capnp, LeaderAndIsr); 0: not sequenced. `target`: the registration of the
// receiving node they are for.
struct leader_and_isr_msg {
  int32_t controller_id = -1;
  int32_t controller_epoch = 0;
  std::vector<partition_state_msg> partitions;
  std::vector<node_endpoint_msg> leaders;
  int64_t sequence = 0;
  incarnation_bytes target{};
};

struct topic_config_msg {
  std::string name;
  topic_id id{};
  bool internal = false;
  std::map<std::string, std::string> configs;
  friend bool operator==(const topic_config_msg&, const topic_config_msg&) = default;
};

// `full`: the whole cluster; otherwise what changed, with the ids of removed topics.
struct update_metadata_msg {
  int32_t controller_id = -1;
  int32_t controller_epoch = 0;
  std::string cluster_id;
  std::vector<node_endpoint_msg> nodes;
  std::vector<topic_config_msg> topics;
  std::vector<partition_state_msg> partitions;
  int64_t sequence = 0;
  bool full = true;
  std::vector<topic_id> removed_topics{};
  incarnation_bytes target{};
};

struct stop_partition_msg {
  topic_partition tp;
  topic_id id{};
  leader_epoch epoch{-2}; // -2: regardless of epoch (Kafka's EpochDuringDelete)
};

struct stop_replica_msg {
  int32_t controller_id = -1;
  int32_t controller_epoch = 0;
  bool delete_partitions = false;
  std::vector<stop_partition_msg> partitions;
  int64_t sequence = 0;
  incarnation_bytes target{};
};

struct partition_error_msg {
  topic_partition tp;
  errc error = errc::none;
  std::string message;
};

// The answer to LeaderAndIsr or StopReplica: a request-wide error, or one per partition.
struct control_response_msg {
  errc error = errc::none;
  std::string message;
  std::vector<partition_error_msg> partitions;
};

struct alter_partition_item {
  topic_partition tp;
  topic_id id{};
  leader_epoch epoch{0};
  int32_t partition_epoch = 0;
  std::vector<node_id> new_isr;
  // Per new_isr member, the incarnation its fetches named (all zeros: unknown); empty: none named
  // (KIP-903: the controller refuses a member whose process restarted since).
  std::vector<incarnation_bytes> new_isr_incarnations{};
};

struct alter_partition_msg {
  node_id broker{0};
  std::vector<alter_partition_item> partitions;
};

struct alter_partition_result_item {
  topic_partition tp;
  errc error = errc::none;
  std::string message;
  node_id leader{-1};
  leader_epoch epoch{0};
  std::vector<node_id> isr;
  int32_t partition_epoch = 0;
};

struct alter_partition_response_msg {
  errc error = errc::none;
  std::string message;
  std::vector<alter_partition_result_item> partitions;
};

capnp_frame encode(const leader_and_isr_msg& m);
capnp_frame encode(const update_metadata_msg& m);
capnp_frame encode(const stop_replica_msg& m);
// As the LeaderAndIsrResponse or StopReplicaResponse schema (`stop` picks which).
capnp_frame encode(const control_response_msg& m, bool stop);
capnp_frame encode(const alter_partition_msg& m);
capnp_frame encode(const alter_partition_response_msg& m);

result<leader_and_isr_msg> decode_leader_and_isr(const capnp_frame& frame);
result<update_metadata_msg> decode_update_metadata(const capnp_frame& frame);
result<stop_replica_msg> decode_stop_replica(const capnp_frame& frame);
result<control_response_msg> decode_control_response(const capnp_frame& frame, bool stop);
result<alter_partition_msg> decode_alter_partition(const capnp_frame& frame);
result<alter_partition_response_msg> decode_alter_partition_response(const capnp_frame& frame);

} // namespace capstan
