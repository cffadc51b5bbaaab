#pragma once

// Messages of the partition replica (actors/replica/partition_replica_actor) and the replica
// manager (actors/replica/replica_manager_actor). Local to a node, like the log actors' messages.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/log/log_messages.hpp"
#include "actors/replica/replica_atoms.hpp"
#include "actors/replica/replication_messages.hpp"
#include "runtime/cluster/metadata.hpp"
#include "runtime/storage/log_config.hpp"
#include "runtime/storage/offset_checkpoint.hpp"

namespace capstan {

// Kafka's special ListOffsets timestamps.
inline constexpr timestamp_ms earliest_timestamp = -2;
inline constexpr timestamp_ms latest_timestamp = -1;

struct produce_request {
  // Exactly one batch, as a producer sent it: validated by the gateway (validated_batch), or
  // bytes the log validates in full (an internal producer's).
  append_batches batch;
  int16_t acks = -1;   // 0, 1 or -1 (all)
  int32_t timeout_ms = 30000;
};

struct produce_result {
  offset base_offset{0};
  timestamp_ms log_append_time = no_timestamp;
  offset log_start{0};
};

struct fetch_request {
  offset from{0};
  int32_t max_bytes = 1048576;
  int32_t min_bytes = 1;
  int32_t max_wait_ms = 500;
  // The leader epoch the consumer's metadata names (KIP-320); -1: not checked.
  leader_epoch current_leader_epoch{-1};
  // The epoch of the batch the consumer read last (KIP-320's truncation detection); -1: none.
  leader_epoch last_fetched_epoch{-1};
};

struct fetch_result {
  offset high_watermark{0};
  offset log_start{0};
  log_slice records; // whole batches, all below the high watermark
  // Set, with no records, when the log no longer holds what the consumer read: this leader's
  // last epoch up to the consumer's last fetched one, and where it ends.
  std::optional<epoch_end> diverging{};
};

// A replica's entries in the data dir's checkpoints.
struct replica_checkpoint {
  offset recovery_point{0}; // everything below it was fsynced
  offset high_watermark{0}; // everything below it was handed out to consumers
};

struct list_offsets_result {
  int64_t found = -1; // -1: no such offset
  timestamp_ms timestamp = no_timestamp;
};

// A replica's role and positions, for metrics and `cluster describe`.
struct replica_status {
  bool leader = false;
  leader_epoch epoch{-1};
  node_id leader_node{-1};
  offset high_watermark{0};
  offset log_start{0};
  offset log_end{0};
  int32_t replicas = 0;
  int32_t isr = 0; // leader only
  int32_t partition_epoch = 0; // leader only
};

// A partition's effective settings: broker defaults overlaid with the topic's overrides.
struct replica_config {
  log_config log;
  int32_t min_insync_replicas = 1;
  int64_t leader_replication_throttled_rate = 0; // bytes per second; 0: none
};

// A leader's proposed ISR (AlterPartition for one partition), through the replica manager to
// the controller.
struct alter_partition_request {
  topic_partition tp;
  topic_id id{};
  leader_epoch epoch{0};
  int32_t partition_epoch = 0;
  std::vector<node_id> isr;
  // Per member, the incarnation its fetches named; empty: none named (isr_proposal).
  std::vector<incarnation_bytes> incarnations{};
};

// The partition's state as the controller committed it.
struct alter_partition_result {
  node_id leader{-1};
  leader_epoch epoch{0};
  int32_t partition_epoch = 0;
  std::vector<node_id> isr;
};

// Where a leader sends its ISR changes (the replica manager, which forwards them).
using alter_partition_sink =
  caf::typed_actor<caf::replies_to<alterisr_atom, alter_partition_request>::with<alter_partition_result>>;

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, produce_result& x) {
  return f(caf::meta::type_name("produce_result"), x.base_offset, x.log_append_time, x.log_start);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, fetch_request& x) {
  return f(caf::meta::type_name("fetch_request"), x.from, x.max_bytes, x.min_bytes, x.max_wait_ms,
           x.current_leader_epoch, x.last_fetched_epoch);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, replica_checkpoint& x) {
  return f(caf::meta::type_name("replica_checkpoint"), x.recovery_point, x.high_watermark);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, list_offsets_result& x) {
  return f(caf::meta::type_name("list_offsets_result"), x.found, x.timestamp);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, replica_status& x) {
  return f(caf::meta::type_name("replica_status"), x.leader, x.epoch, x.leader_node,
           x.high_watermark, x.log_start, x.log_end, x.replicas, x.isr, x.partition_epoch);
}

// One partition's replica on this node, leader or follower as its last role says
// (actors/replica/partition_replica_actor.hpp). Errors are caf::errors of category "capstan":
// NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS(_AFTER_APPEND), REQUEST_TIMED_OUT, CORRUPT_MESSAGE,
// MESSAGE_TOO_LARGE, INVALID_RECORD, OFFSET_OUT_OF_RANGE, FENCED_LEADER_EPOCH,
// UNKNOWN_LEADER_EPOCH, KAFKA_STORAGE_ERROR. An offline partition
// (actors/replica/offline_replica_actor.hpp) answers every request with KAFKA_STORAGE_ERROR naming
// the damage.
using partition_replica_actor = caf::typed_actor<
  // Clients, leader only.
  caf::replies_to<produce_atom, produce_request>::with<produce_result>,
  // Delayed (long-poll) fetch: answers once min_bytes are available below the high watermark or
  // max_wait_ms passed; woken by appends, never by polling.
  caf::replies_to<fetch_atom, fetch_request>::with<fetch_result>,
  caf::replies_to<offsets_atom, timestamp_ms>::with<list_offsets_result>,
  caf::replies_to<info_atom>::with<log_info>,
  caf::replies_to<status_atom>::with<replica_status>,
  // The current recovery point and high watermark, for the data dir's checkpoints.
  caf::replies_to<checkpoint_atom>::with<replica_checkpoint>,
  // Becomes leader or follower (a stale epoch is FENCED_LEADER_EPOCH).
  caf::replies_to<become_atom, replica_role>::with<bool>,
  // The topic's configs changed: min.insync.replicas takes effect at once (pending acks=-1
  // produces are judged by it), the log's configs go to the log.
  caf::reacts_to<reconfig_atom, replica_config>,
  // Leader side of replication: a follower's fetch; OffsetsForLeaderEpoch (current epoch of the
  // asker, requested epoch).
  caf::replies_to<ffetch_atom, follower_fetch_request>::with<follower_fetch_result>,
  caf::replies_to<epochend_atom, leader_epoch, leader_epoch>::with<epoch_end>,
  // Follower side, from its fetcher (each names the leader epoch it follows).
  caf::replies_to<position_atom>::with<follower_position>,
  caf::replies_to<ftruncate_atom, leader_epoch, epoch_end>::with<truncation_decision>,
  caf::replies_to<replicate_atom, replicate_request>::with<offset>,
  caf::replies_to<restart_atom, leader_epoch, offset>::with<offset>,
  // Flushes and closes the log, fails parked fetches, quits; replies the final checkpoint values.
  caf::replies_to<close_atom>::with<replica_checkpoint>,
  caf::reacts_to<tick_atom>,
  caf::reacts_to<isrcheck_atom>>;

// One per node. Applies metadata snapshots: creates the replica (and its log directory
// <data-dir>/<topic>-<partition>) of every partition assigned to this node, and closes and deletes
// those of deleted topics. Publishes a routing table that the RPC thread reads without a message
// round trip. Writes the data dir's checkpoints every log.flush.offset.checkpoint.interval.ms,
// after a topic is deleted or created, and on stop.
using replica_manager_actor = caf::typed_actor<
  // Replies once every partition of the snapshot is open, offline (damaged or unreadable: it
  // answers KAFKA_STORAGE_ERROR) or skipped (a bad config); the reply lists the snapshot's
  // partitions on this node that do not serve (offline or not opened), empty when all do.
  caf::replies_to<apply_atom, metadata_snapshot>::with<std::vector<topic_partition>>,
  // UNKNOWN_TOPIC_OR_PARTITION when this node has no replica of it.
  caf::replies_to<lookup_atom, std::string, int32_t>::with<partition_replica_actor>,
  // Gathers every replica's recovery point and high watermark and writes the checkpoints now;
  // replies whether the files were written.
  caf::replies_to<checkpoint_atom>::with<bool>,
  // Closes every replica, writes the checkpoints, replies, quits.
  caf::replies_to<stop_atom>::with<bool>,
  caf::reacts_to<tick_atom>,
  // The controller's requests (through the node endpoint), answered with their response frames
  // (UpdateMetadata: the empty frame). A stale controller epoch is refused whole.
  caf::replies_to<leaderisr_atom, capnp_frame>::with<capnp_frame>,
  caf::replies_to<metadata_atom, capnp_frame>::with<capnp_frame>,
  caf::replies_to<stopreplica_atom, capnp_frame>::with<capnp_frame>,
  // A local leader's ISR change, forwarded to the active controller.
  caf::replies_to<alterisr_atom, alter_partition_request>::with<alter_partition_result>>;

// topic-partition -> replica, replaced whole on every change (copy-on-write): the RPC thread loads
// the current table with std::atomic_load and never blocks the replica manager.
using routing_table = std::map<topic_partition, partition_replica_actor>;
using routing_table_ptr = std::shared_ptr<const routing_table>;

} // namespace capstan

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::produce_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::alter_partition_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::alter_partition_result)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::fetch_result)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::replica_config)
