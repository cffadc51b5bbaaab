#pragma once

// Messages of the partition replica (actors/replica/partition_replica_actor) and the replica
// manager (actors/replica/replica_manager_actor). Local to a node, like the log actors' messages.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/log/log_messages.hpp"
#include "runtime/cluster/metadata.hpp"
#include "runtime/storage/offset_checkpoint.hpp"

namespace capstan {

using produce_atom = caf::atom_constant<caf::atom("produce")>;
using fetch_atom = caf::atom_constant<caf::atom("fetch")>;
using offsets_atom = caf::atom_constant<caf::atom("offsets")>;
using lookup_atom = caf::atom_constant<caf::atom("lookup")>;
using apply_atom = caf::atom_constant<caf::atom("apply")>;
using remove_atom = caf::atom_constant<caf::atom("remove")>;
using stop_atom = caf::atom_constant<caf::atom("stop")>;
using checkpoint_atom = caf::atom_constant<caf::atom("checkpoint")>;
inline constexpr produce_atom produce_atom_v{};
inline constexpr fetch_atom fetch_atom_v{};
inline constexpr offsets_atom offsets_atom_v{};
inline constexpr lookup_atom lookup_atom_v{};
inline constexpr apply_atom apply_atom_v{};
inline constexpr remove_atom remove_atom_v{};
inline constexpr stop_atom stop_atom_v{};
inline constexpr checkpoint_atom checkpoint_atom_v{};

// Kafka's special ListOffsets timestamps.
inline constexpr timestamp_ms earliest_timestamp = -2;
inline constexpr timestamp_ms latest_timestamp = -1;

struct produce_request {
  batch_buffer batch;  // exactly one batch, as a producer sent it
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
};

struct fetch_result {
  offset high_watermark{0};
  offset log_start{0};
  log_slice records; // whole batches, all below the high watermark
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

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, produce_result& x) {
  return f(caf::meta::type_name("produce_result"), x.base_offset, x.log_append_time, x.log_start);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, fetch_request& x) {
  return f(caf::meta::type_name("fetch_request"), x.from, x.max_bytes, x.min_bytes, x.max_wait_ms);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, replica_checkpoint& x) {
  return f(caf::meta::type_name("replica_checkpoint"), x.recovery_point, x.high_watermark);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, list_offsets_result& x) {
  return f(caf::meta::type_name("list_offsets_result"), x.found, x.timestamp);
}

// The leader replica of one partition on this node (single-node: the only replica). Errors are
// caf::errors of category "capstan": NOT_ENOUGH_REPLICAS, REQUEST_TIMED_OUT, CORRUPT_MESSAGE,
// MESSAGE_TOO_LARGE, INVALID_RECORD, OFFSET_OUT_OF_RANGE, KAFKA_STORAGE_ERROR. An offline
// partition (actors/replica/offline_replica_actor.hpp) answers every request with
// KAFKA_STORAGE_ERROR naming the damage.
using partition_replica_actor = caf::typed_actor<
  caf::replies_to<produce_atom, produce_request>::with<produce_result>,
  // Delayed (long-poll) fetch: answers once min_bytes are available below the high watermark or
  // max_wait_ms passed; woken by appends, never by polling.
  caf::replies_to<fetch_atom, fetch_request>::with<fetch_result>,
  caf::replies_to<offsets_atom, timestamp_ms>::with<list_offsets_result>,
  caf::replies_to<info_atom>::with<log_info>,
  // The current recovery point and high watermark, for the data dir's checkpoints.
  caf::replies_to<checkpoint_atom>::with<replica_checkpoint>,
  // Flushes and closes the log, fails parked fetches, quits; replies the final checkpoint values.
  caf::replies_to<close_atom>::with<replica_checkpoint>,
  caf::reacts_to<tick_atom>>;

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
  caf::reacts_to<tick_atom>>;

// topic-partition -> replica, replaced whole on every change (copy-on-write): the RPC thread loads
// the current table with std::atomic_load and never blocks the replica manager.
using routing_table = std::map<topic_partition, partition_replica_actor>;
using routing_table_ptr = std::shared_ptr<const routing_table>;

} // namespace capstan

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::produce_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::fetch_result)
