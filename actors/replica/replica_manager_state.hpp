#pragma once

// The replica manager actor's state and the functions its handlers share:
// replica_manager_actor.cpp (snapshots of the single-node metadata, opening and closing replicas,
// checkpoints) and replica_manager_control.cpp (the controller's LeaderAndIsr, UpdateMetadata and
// StopReplica, and leaders' ISR changes on their way to the controller). Internal to
// actors/replica.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <caf/typed_event_based_actor.hpp>

#include "actors/log/io_worker_actor.hpp"
#include "actors/replica/control_codec.hpp"
#include "actors/replica/control_sequence.hpp"
#include "actors/replica/fetcher_manager_actor.hpp"
#include "actors/replica/node_endpoint_actor.hpp"
#include "actors/replica/partition_replica_actor.hpp"
#include "actors/replica/replica_manager_actor.hpp"
#include "runtime/storage/partition_check.hpp"

namespace capstan::replica_manager_detail {

struct replica_entry {
  partition_replica_actor actor;
  topic_id id{};
  // The topic's config overrides the replica runs with; a change (alterConfigs) reaches it live.
  std::map<std::string, std::string> configs;
  // An offline replica (damaged or unreadable directory): its checkpoint entries stay as loaded.
  bool offline = false;
  // The last leader epoch, partition epoch and leader the controller gave it (-1: none yet).
  leader_epoch epoch{-1};
  int32_t partition_epoch = -1;
  node_id leader{-1};
  // Placed or taken over by the controller's LeaderAndIsr: the node's own metadata snapshots
  // (apply) neither close, reconfigure nor delete it; only StopReplica does.
  bool from_controller = false;
  // Its log, while the controller names no leader for its partition (reported in heartbeats).
  std::optional<replica_log_info> leaderless{};
};

// A leader's ISR change waiting for the controller, with the leader's promise.
struct isr_change {
  alter_partition_item item;
  caf::typed_response_promise<alter_partition_result> rp;
};

struct replica_manager_state {
  static inline const char* name = "capstan.replica_manager";

  replica_manager_options opts;
  std::shared_ptr<routing_registry> routes;
  std::map<topic_partition, replica_entry> replicas;
  // The checkpoints as loaded at start, updated from the replicas; partitions not opened in this
  // run keep their entries.
  offset_map recovery_points;
  offset_map high_watermarks;
  // Partitions deleted since the checkpoints last reached the disk: gone from the maps above but
  // perhaps still in the files. No directory of that name is created before a write succeeds.
  std::set<topic_partition> unrecorded_deletions;
  bool periodic_checkpoint_running = false;
  bool stopping = false;

  // Replication: where peers are, and who fetches for this node's followers.
  peer_directory_actor peers;
  fetcher_manager_actor fetchers;
  // The controller: the highest epoch seen on its requests, and the actor that sent them (the
  // active controller, where leaders' ISR changes go).
  int32_t controller_epoch = -1;
  controller_sink controller;
  node_id controller_node{-1};
  // Kafka's AlterPartitionManager: ISR changes queue here, one per partition (a newer one
  // replaces a queued one), and go to the controller together, one AlterPartition in flight at a
  // time, so that thousands of leaders changing their ISRs at once (after a node returns) cost a
  // few controller decisions rather than thousands of requests timing out behind each other.
  std::map<topic_partition, isr_change> isr_changes_queued;
  // The AlterPartition in flight, if any, and its number: a new controller gets it again at once
  // (its answer from the old one, if it ever comes, no longer counts).
  std::vector<isr_change> isr_changes_sent;
  bool isr_changes_in_flight = false;
  uint64_t isr_batch = 0;
  // The I/O workers of the node's partition logs (linked), and the next to hand out.
  std::vector<io_worker_actor> io_workers;
  size_t next_io_worker = 0;
  // Topic configs and ids from the controller's UpdateMetadata, by name.
  std::map<std::string, topic_config_msg> topics;
  // Where the controller's stream of control messages to this node stands.
  control_sequence stream;
};

using self_ptr = replica_manager_actor::stateful_pointer<replica_manager_state>;

std::filesystem::path partition_dir(const replica_manager_state& st, const topic_partition& tp);
std::string log_name(const replica_manager_state& st, const topic_partition& tp);
void publish_routes(self_ptr self);
// Writes both checkpoint files on an I/O worker (each fsynced, and the data dir) while the
// manager awaits it, handling nothing else meanwhile, without holding a scheduler thread; `done`
// gets the outcome.
void write_checkpoints_on_worker(self_ptr self, std::function<void(status)> done);
void record(replica_manager_state& st, const topic_partition& tp, const replica_checkpoint& c);
void forget(replica_manager_state& st, const topic_partition& tp);
partition_replica_actor go_offline(self_ptr self, const topic_partition& tp, const std::string& why);
// Opening a partition in three steps: plan_open decides on the manager what can be decided
// without a file (config, checkpoints, worker); load_partition does the file work (the
// directory's check against the checkpoints, then loading and recovering the log) and runs on
// the partition's I/O worker; finish_open spawns the replica, or an offline one, on the manager.
struct open_plan {
  topic_partition tp;
  replica_entry entry;
  // Set when the outcome is known without loading (a bad config: nullopt entry; an offline one).
  bool decided = false;
  std::optional<replica_entry> outcome;
  bool lead_alone = false;
  // Its directory's earlier deletion is not in the checkpoints yet: load_plans writes them first.
  bool needs_recorded_deletion = false;
  leader_epoch epoch{0};
  topic_id id{};
  checkpointed_offsets known;
  segment_options seg_opts;
  partition_replica_options ro;
  // Filled by load_partition.
  std::optional<result<prepared_dir>> prepared;
  std::optional<result<loaded_partition_log>> loaded;
};

// REQUIRES: the partition has no replica yet. Picks its I/O worker.
std::shared_ptr<open_plan> plan_open(self_ptr self, const topic_metadata& topic,
                                     const partition_assignment& a, bool lead_alone);
// Runs load_partition for every plan that needs it on the plan's I/O worker, in parallel across
// workers, while the manager awaits (handles nothing else); then `done`.
void load_plans(self_ptr self, const std::vector<std::shared_ptr<open_plan>>& plans,
                std::function<void()> done);
// Spawns the replica of a loaded plan, or an offline one for a damaged or unreadable directory.
// nullopt: a bad topic config (skipped). With `lead_alone` (in the plan) the replica becomes the
// leader of an ISR of itself at once (one node).
std::optional<replica_entry> finish_open(self_ptr self, open_plan& plan, bool& checkpoints_changed);
// Sends every live replica of the topic `name` (with id `id`; any id when it is all zeros) that
// the controller placed (`from_controller`) or the node's own metadata did (not), the configs
// `configs` overlaid on the node's defaults, where they differ from those it runs with, as Kafka
// applies an alter-config to its live logs. Configs that do not parse are logged and leave the
// replica as it is (the controller validated them; a node's defaults may differ).
void reconfigure_replicas(self_ptr self, bool from_controller, const std::string& name,
                          const topic_id& id, const std::map<std::string, std::string>& configs);
// Closes the replica of `tp` (and with `remove` deletes its directory, out of the checkpoints
// first); `done` runs afterwards. The caller publishes the routes once its whole batch is
// dropped (a publication copies every route).
void drop_replica(self_ptr self, const topic_partition& tp, bool remove, std::function<void()> done);

// replica_manager_control.cpp
caf::result<capnp_frame> leader_and_isr(self_ptr self, const capnp_frame& frame);
caf::result<capnp_frame> update_metadata(self_ptr self, const capnp_frame& frame);
caf::result<capnp_frame> stop_replica(self_ptr self, const capnp_frame& frame);
caf::result<alter_partition_result> forward_isr_change(self_ptr self, alter_partition_request& req);
// Sends the queued ISR changes as one AlterPartition unless one is in flight.
void send_isr_changes(self_ptr self);
// The controller changed: the changes in flight go to it again, with those queued.
void resend_isr_changes(self_ptr self);

} // namespace capstan::replica_manager_detail
