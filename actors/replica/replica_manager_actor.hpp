#pragma once

// The replica manager: one per node. It applies metadata snapshots (creating the replica of every
// partition assigned to this node, closing and deleting those of deleted topics), answers lookups,
// publishes the routing table the RPC thread reads, and keeps the data dir's checkpoints
// (<data-dir>/recovery-point-offset-checkpoint and replication-offset-checkpoint): written every
// checkpoint_interval_ms, after a deletion or creation, and on stop. Before it opens a partition
// directory it compares it with the checkpoints (runtime/storage/partition_check.hpp); a damaged
// or unreadable one is served by an offline replica. Its protocol is replica_manager_actor in
// replica_messages.hpp.

#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include <caf/fwd.hpp>

#include "actors/replica/metadata_cache.hpp"
#include "actors/replica/node_endpoint_actor.hpp"
#include "actors/replica/replica_fetcher_actor.hpp"
#include "actors/replica/replica_messages.hpp"
#include "runtime/cluster/offline_replicas.hpp"
#include "runtime/result.hpp"
#include "runtime/storage/log_config.hpp"

namespace capstan {

// The current routing table, replaced whole by the replica manager and read from any thread
// (the RPC thread) without a message round trip or a lock held across calls.
class routing_registry {
public:
  routing_registry() = default;
  routing_registry(const routing_registry&) = delete;
  routing_registry& operator=(const routing_registry&) = delete;

  // Never null.
  routing_table_ptr current() const { return std::atomic_load(&table_); }
  // Only the replica manager publishes.
  void publish(routing_table_ptr table) {
    std::atomic_store(&table_, std::move(table));
    publications_.fetch_add(1, std::memory_order_relaxed);
  }
  // How many tables were published: each copies every route, so a batch of control changes
  // publishes once, not once per partition.
  uint64_t publications() const { return publications_.load(std::memory_order_relaxed); }

private:
  routing_table_ptr table_ = std::make_shared<const routing_table>();
  std::atomic<uint64_t> publications_{0};
};

// Splits min.insync.replicas (an integer >= 1) from the log configs. Errors: INVALID_CONFIG
// naming the key.
result<replica_config> effective_replica_config(const std::map<std::string, std::string>& topic_configs,
                                                const log_config& defaults,
                                                int32_t default_min_insync_replicas);

struct replica_manager_options {
  node_id node{1};
  std::filesystem::path data_dir;
  log_config log_defaults;
  int32_t min_insync_replicas = 1;
  // Wall clock in ms for the logs; empty: the system clock.
  std::function<timestamp_ms()> clock;
  // Passed to every log (retention, flush.ms and compaction timers).
  bool schedule_background_work = true;
  // log.flush.offset.checkpoint.interval.ms: how often the checkpoints are written; 0 only on
  // the events above (tests drive it with checkpoint_atom).
  int64_t checkpoint_interval_ms = 60000;
  // replica.lag.time.max.ms for every leader on this node.
  int64_t replica_lag_time_max_ms = 30000;
  // How many I/O workers (detached actors, each its own thread) run the blocking file work of
  // this node's partition logs; each partition is given one, round robin in opening order
  // (actors/log/io_worker_actor.hpp). At least 1.
  int32_t io_workers = 2;
  // num.replica.fetchers and the fetchers' settings (replica.fetch.*).
  int32_t num_replica_fetchers = 1;
  replica_fetcher_config fetcher_config;
  // This node's endpoint (its peer directory opens local sessions there without a hop); may be
  // empty.
  node_endpoint_actor endpoint;
  // Where every accepted UpdateMetadata is published as the node's metadata cache, for the
  // client gateway; may be null (no one answers clients from it).
  std::shared_ptr<metadata_cache_registry> metadata_registry;
  // Where the replicas this node cannot serve are published with the routing table, for the
  // broker lifecycle's heartbeats; may be null (a single node reports to no controller).
  std::shared_ptr<offline_replica_registry> offline_registry;
  // Where the logs of its replicas without a leader go (reported in heartbeats); may be null.
  std::shared_ptr<leaderless_replica_registry> leaderless_registry;
  // This process's incarnation (its registration with the controller): control messages for
  // another one, its predecessor's, are refused with STALE_BROKER_EPOCH. All zeros: any is taken.
  incarnation_bytes incarnation{};
};

// Creates the data dir if missing and reads its checkpoints, then spawns the manager. A malformed
// recovery-point-offset-checkpoint is logged and ignored (every segment is then re-validated,
// which is safe); so is a malformed replication-offset-checkpoint (damage is then judged by the
// recovery points alone). Errors: KAFKA_STORAGE_ERROR when the data dir cannot be created.
result<replica_manager_actor> spawn_replica_manager(caf::actor_system& sys,
                                                    replica_manager_options options,
                                                    std::shared_ptr<routing_registry> routes);

} // namespace capstan
