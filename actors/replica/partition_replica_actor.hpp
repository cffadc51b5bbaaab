#pragma once

// Opens a partition's log and spawns the replica that owns it. Its protocol is
// partition_replica_actor in replica_messages.hpp: roles (leader or follower, from the
// controller's LeaderAndIsr), produce with acks and min.insync.replicas, long-poll fetch below the
// high watermark, follower fetches, truncation by leader epoch, list offsets, info, close.
// docs/replication.md describes the protocol.

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include <caf/fwd.hpp>

#include "actors/log/io_worker_actor.hpp"
#include "actors/log/partition_log_actor.hpp"
#include "actors/replica/replica_messages.hpp"
#include "runtime/cluster/metadata.hpp"
#include "runtime/result.hpp"
#include "runtime/storage/log_config.hpp"

namespace capstan {

struct partition_replica_options {
  std::string topic;
  int32_t partition = 0;
  topic_id id{};
  node_id node{1};
  // The partition's log directory, <data-dir>/<topic>-<partition>.
  std::filesystem::path dir;
  log_config config;
  // From recovery-point-offset-checkpoint: everything below it was flushed before the last stop.
  offset recovery_point{0};
  // `dir` may not be durable yet (prepared_dir::unsynced).
  bool dir_unsynced = false;
  // From replication-offset-checkpoint: the last high watermark known (capped at the log end).
  offset high_watermark{0};
  // min.insync.replicas: acks=-1 produce needs an ISR at least this large (NOT_ENOUGH_REPLICAS).
  int32_t min_insync_replicas = 1;
  // leader.replication.throttled.rate in bytes per second (replication_throttle.hpp); 0: none.
  int64_t leader_replication_throttled_rate = 0;
  // replica.lag.time.max.ms: a follower that has not caught up for this long leaves the ISR.
  int64_t replica_lag_time_max_ms = 30000;
  // Where ISR changes go (the replica manager). Empty: they commit at once (a replica alone).
  alter_partition_sink alter_sink;
  // The leader epoch at which the node's metadata cache names this node the partition's leader,
  // if it does. A node takes the controller's UpdateMetadata before its LeaderAndIsr, so a
  // client can be sent here (by this node's Metadata answer or another's) a moment before this
  // replica leads: a produce then waits for the leadership, up to leadership_wait, instead of
  // being refused. Empty: a produce to a replica that does not lead is refused at once.
  std::function<std::optional<leader_epoch>()> announced_leadership;
  std::chrono::milliseconds leadership_wait{100};
  // Upper bound of a fetch's max_wait_ms (a client cannot park a fetch for longer).
  int32_t max_fetch_wait_ms = 300000;
  // Wall clock in ms for the log; empty: the system clock.
  std::function<timestamp_ms()> clock;
  // Passed to the log (retention, flush.ms and compaction timers).
  bool schedule_background_work = true;
  // Called after a follower's truncation moved the log end down (the recovery point with it): the
  // replica manager writes the checkpoints at once, as Kafka does, so that a crash right after
  // does not find the checkpointed recovery point past the log end and take the partition for
  // damaged. Empty: nobody is told.
  std::function<void()> truncated;
  // The I/O worker of the replica's log (partition_log_options::worker); empty: one of its own.
  io_worker_actor io_worker;
};

// The options of the replica's log.
partition_log_options log_options_of(const partition_replica_options& options);

// Opens (recovers) the log synchronously on the calling thread, then spawns the replica, which
// links itself to its log. Errors: KAFKA_STORAGE_ERROR from opening the log.
result<partition_replica_actor> spawn_partition_replica(caf::actor_system& sys,
                                                        partition_replica_options options);

// Spawns the replica over a log loaded beforehand (load_partition_log with log_options_of, on an
// I/O worker); does no file I/O on the calling thread.
partition_replica_actor spawn_partition_replica(caf::actor_system& sys,
                                                partition_replica_options options,
                                                loaded_partition_log log);

// Spawns the replica over a log actor already running, which the replica links itself to (and
// closes when it closes).
partition_replica_actor spawn_partition_replica(caf::actor_system& sys,
                                                partition_replica_options options,
                                                partition_log_actor log);

} // namespace capstan
