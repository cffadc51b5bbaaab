// The replica manager actor (one per node): turns metadata snapshots into partition replicas on
// this node, keeps the routing table the RPC thread reads, and keeps the data dir's checkpoints.
// With one node every replica is the leader; LeaderAndIsr handling (epochs, followers) comes with
// replication.
//
// Ordering: closing a replica and deleting its directory finish (with `await`, holding back other
// messages) before a snapshot's new replicas are opened, so a topic deleted and created again
// under the same name never shares a directory with its predecessor. The checkpoints are written
// without the deleted partitions before a directory of the same name is created again: a stale
// entry would make the new directory's never-fsynced segments trusted.

#include "actors/replica/replica_manager_actor.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <set>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/countdown.hpp"
#include "actors/replica/offline_replica_actor.hpp"
#include "actors/replica/partition_replica_actor.hpp"
#include "actors/replica/replica_manager_state.hpp"
#include "runtime/actor/caf_error.hpp"
#include "runtime/cluster/topic_validation.hpp"
#include "runtime/storage/file_handle.hpp"
#include "runtime/storage/offset_checkpoint.hpp"
#include "runtime/storage/partition_check.hpp"

namespace capstan {

namespace replica_manager_detail {

namespace {

// A replica that does not answer a checkpoint query within this is left at its last values.
constexpr auto checkpoint_query_timeout = std::chrono::seconds(30);

} // namespace


std::filesystem::path partition_dir(const replica_manager_state& st, const topic_partition& tp) {
  return st.opts.data_dir / (tp.first + "-" + std::to_string(tp.second));
}

std::string log_name(const replica_manager_state& st, const topic_partition& tp) {
  return tp.first + "-" + std::to_string(tp.second) + " on node " + std::to_string(st.opts.node.value());
}

void publish_routes(self_ptr self) {
  auto& st = self->state;
  auto table = std::make_shared<routing_table>();
  offline_replicas offline;
  replica_log_infos leaderless;
  for (const auto& [tp, e] : st.replicas) {
    table->emplace(tp, e.actor);
    // Without a topic id (not placed by a controller) there is nobody to tell.
    if (e.offline && e.id != topic_id{}) offline.push_back(offline_replica{e.id, tp.second});
    if (e.leaderless && !e.offline) leaderless.push_back(*e.leaderless);
  }
  st.routes->publish(std::move(table));
  if (st.opts.offline_registry) st.opts.offline_registry->publish(std::move(offline));
  if (st.opts.leaderless_registry) st.opts.leaderless_registry->publish(std::move(leaderless));
}

// Writes both checkpoint files from the maps; afterwards no deleted partition is left in them.
status write_checkpoint_files(const std::filesystem::path& data_dir, node_id node,
                              const offset_map& recovery_points, const offset_map& high_watermarks) {
  for (const auto& [name, offsets] : {std::pair{recovery_point_checkpoint_name, &recovery_points},
                                      std::pair{high_watermark_checkpoint_name, &high_watermarks}}) {
    const auto file = data_dir / name;
    if (auto s = write_offset_checkpoint(file, *offsets); !s) {
      spdlog::error("node {}: cannot write {}: {}", node.value(), file.string(), s.err().to_string());
      return s;
    }
  }
  return {};
}

void write_checkpoints_on_worker(self_ptr self, std::function<void(status)> done) {
  auto& st = self->state;
  auto written = std::make_shared<status>();
  self->request(st.io_workers.front(), caf::infinite, run_atom_v,
                io_task{[written, dir = st.opts.data_dir, node = st.opts.node,
                         rps = st.recovery_points, hws = st.high_watermarks] {
                  *written = write_checkpoint_files(dir, node, rps, hws);
                }})
    .await(
      [self, written, done](bool) {
        if (*written) self->state.unrecorded_deletions.clear();
        done(*written);
      },
      [done](caf::error& e) { done(from_caf_error(e)); });
}

void record(replica_manager_state& st, const topic_partition& tp, const replica_checkpoint& c) {
  st.recovery_points[tp] = c.recovery_point;
  st.high_watermarks[tp] = c.high_watermark;
}

void forget(replica_manager_state& st, const topic_partition& tp) {
  st.recovery_points.erase(tp);
  st.high_watermarks.erase(tp);
}

// Asks every live replica for its recovery point and high watermark, then writes the checkpoints;
// done(written) runs after the write.
void checkpoint_all(self_ptr self, std::function<void(bool)> done) {
  auto& st = self->state;
  std::vector<std::pair<topic_partition, partition_replica_actor>> live;
  for (const auto& [tp, e] : st.replicas)
    if (!e.offline) live.emplace_back(tp, e.actor);
  auto pending = std::make_shared<countdown>(countdown{live.size() + 1, nullptr});
  pending->done = [self, done] { write_checkpoints_on_worker(self, [done](status s) { done(s.ok()); }); };
  for (const auto& [tp, actor] : live) {
    self->request(actor, checkpoint_query_timeout, checkpoint_atom_v)
      .then(
        [self, tp = tp, actor = actor, pending](const replica_checkpoint& c) {
          // Only if the partition was not closed or replaced meanwhile.
          auto it = self->state.replicas.find(tp);
          if (it != self->state.replicas.end() && it->second.actor == actor) record(self->state, tp, c);
          pending->arrive();
        },
        [pending](caf::error&) { pending->arrive(); });
  }
  pending->arrive();
}

partition_replica_actor go_offline(self_ptr self, const topic_partition& tp, const std::string& why) {
  auto reason = log_name(self->state, tp) + " is offline: " + why;
  spdlog::error("{}", reason);
  auto actor = spawn_offline_replica(self->system(), std::move(reason));
  self->link_to(actor);
  return actor;
}

std::shared_ptr<open_plan> plan_open(self_ptr self, const topic_metadata& topic,
                                     const partition_assignment& a, bool lead_alone) {
  auto& st = self->state;
  auto plan = std::make_shared<open_plan>();
  plan->tp = topic_partition{topic.name, a.partition};
  const auto& tp = plan->tp;
  auto cfg = effective_replica_config(topic.configs, st.opts.log_defaults, st.opts.min_insync_replicas);
  if (!cfg) {
    spdlog::error("node {}: cannot open {}-{}: {}", st.opts.node.value(), topic.name, a.partition,
                  cfg.err().to_string());
    plan->decided = true;
    return plan;
  }
  plan->entry = replica_entry{partition_replica_actor{}, topic.id, topic.configs, true};
  plan->needs_recorded_deletion = st.unrecorded_deletions.count(tp) != 0;
  if (auto it = st.recovery_points.find(tp); it != st.recovery_points.end()) plan->known.recovery_point = it->second;
  if (auto it = st.high_watermarks.find(tp); it != st.high_watermarks.end()) plan->known.high_watermark = it->second;
  plan->seg_opts.index_interval_bytes = static_cast<size_t>(cfg->log.index_interval_bytes);
  plan->seg_opts.max_batch_bytes = static_cast<size_t>(cfg->log.max_message_bytes);
  plan->id = topic.id;
  plan->lead_alone = lead_alone;
  plan->epoch = leader_epoch{a.leader_epoch};
  auto& ro = plan->ro;
  ro.topic = topic.name;
  ro.partition = a.partition;
  ro.node = st.opts.node;
  ro.dir = partition_dir(st, tp);
  ro.config = cfg->log;
  ro.id = topic.id;
  ro.min_insync_replicas = cfg->min_insync_replicas;
  ro.leader_replication_throttled_rate = cfg->leader_replication_throttled_rate;
  if (auto it = st.high_watermarks.find(tp); it != st.high_watermarks.end()) ro.high_watermark = it->second;
  ro.replica_lag_time_max_ms = st.opts.replica_lag_time_max_ms;
  ro.alter_sink = caf::actor_cast<alter_partition_sink>(self);
  if (auto registry = st.opts.metadata_registry)
    ro.announced_leadership = [registry, topic = topic.name, id = topic.id, partition = a.partition,
                               node = st.opts.node]() -> std::optional<leader_epoch> {
      auto cache = registry->current();
      return cache ? cache->led_by(topic, id, partition, node) : std::nullopt;
    };
  ro.clock = st.opts.clock;
  ro.schedule_background_work = st.opts.schedule_background_work;
  // By address: a replica must not keep its manager alive.
  ro.truncated = [manager = self->address()] {
    if (auto m = caf::actor_cast<caf::actor>(manager)) caf::anon_send(m, checkpoint_atom_v);
  };
  ro.io_worker = st.io_workers[st.next_io_worker++ % st.io_workers.size()];
  return plan;
}

// Blocks on file I/O; touches nothing but the plan. REQUIRES: !plan.decided.
void load_partition(open_plan& plan) {
  plan.prepared = prepare_partition_dir(plan.ro.dir, plan.tp.first + "-" + std::to_string(plan.tp.second),
                                        plan.id, plan.known, plan.seg_opts);
  if (!*plan.prepared) return;
  plan.ro.recovery_point = (*plan.prepared)->recovery_point;
  plan.ro.dir_unsynced = (*plan.prepared)->unsynced;
  plan.loaded = load_partition_log(log_options_of(plan.ro));
}

std::optional<replica_entry> finish_open(self_ptr self, open_plan& plan, bool& checkpoints_changed) {
  auto& st = self->state;
  if (plan.decided) return plan.outcome;
  const auto& tp = plan.tp;
  auto& entry = plan.entry;
  if (!plan.prepared) {
    entry.actor = go_offline(self, tp, "its directory was not loaded: the I/O worker stopped");
    return entry;
  }
  if (!*plan.prepared) {
    entry.actor = go_offline(self, tp, plan.prepared->err().message);
    return entry;
  }
  const auto& prepared = **plan.prepared;
  if (prepared.state == dir_state::replaced)
    spdlog::warn("{}: {} belonged to an earlier topic of that name; moved it to {}",
                 log_name(st, tp), plan.ro.dir.string(), prepared.moved_to.string());
  if (prepared.state != dir_state::intact) {
    record(st, tp, replica_checkpoint{});
    checkpoints_changed = true;
  }
  if (!plan.loaded || !*plan.loaded) {
    entry.actor = go_offline(self, tp, plan.loaded ? plan.loaded->err().message
                                                   : std::string("its log was not loaded"));
    return entry;
  }
  auto replica = spawn_partition_replica(self->system(), std::move(plan.ro), std::move(**plan.loaded));
  self->link_to(replica);
  entry.actor = replica;
  entry.offline = false;
  if (plan.lead_alone) {
    // One node: this node leads every partition it hosts, alone in the ISR.
    replica_role role;
    role.leader = st.opts.node;
    role.epoch = plan.epoch;
    role.replicas = {st.opts.node};
    role.isr = {st.opts.node};
    entry.epoch = role.epoch;
    caf::anon_send(replica, become_atom_v, role);
  }
  return entry;
}

// Opens the replicas of `snapshot` that this node hosts and does not have yet, loading their
// directories on the I/O workers in parallel (one at a time per worker) while the manager holds
// back its other messages; then calls done with those of its partitions on this node that do not
// serve (offline, or not opened).
void open_new_replicas(self_ptr self, const metadata_snapshot& snapshot,
                       std::function<void(std::vector<topic_partition>)> done) {
  auto& st = self->state;
  std::vector<std::shared_ptr<open_plan>> plans;
  for (const auto& [name, topic] : snapshot->topics) {
    for (const auto& a : topic.partitions) {
      if (std::find(a.replicas.begin(), a.replicas.end(), st.opts.node.value()) == a.replicas.end())
        continue;
      if (st.replicas.count(topic_partition{name, a.partition}) != 0) continue;
      plans.push_back(plan_open(self, topic, a, true));
    }
  }
  auto finish = [self, snapshot, plans, done] {
    auto& st = self->state;
    bool checkpoints_changed = false;
    for (const auto& plan : plans) {
      auto entry = finish_open(self, *plan, checkpoints_changed);
      if (entry) st.replicas.emplace(plan->tp, std::move(*entry));
    }
    std::vector<topic_partition> unserved;
    for (const auto& [name, topic] : snapshot->topics)
      for (const auto& a : topic.partitions) {
        if (std::find(a.replicas.begin(), a.replicas.end(), st.opts.node.value()) == a.replicas.end())
          continue;
        auto it = st.replicas.find(topic_partition{name, a.partition});
        if (it == st.replicas.end() || it->second.offline) unserved.emplace_back(name, a.partition);
      }
    publish_routes(self);
    std::string offline;
    for (const auto& [tp, e] : st.replicas)
      if (e.offline) offline += (offline.empty() ? "" : ", ") + tp.first + "-" + std::to_string(tp.second);
    if (!offline.empty())
      spdlog::warn("node {}: offline partitions (they answer KAFKA_STORAGE_ERROR until repaired, "
                   "see the errors above): {}",
                   st.opts.node.value(), offline);
    // New partitions are in the checkpoints from the start (before the snapshot is answered), so
    // a directory lost later is noticed.
    if (!checkpoints_changed) {
      done(std::move(unserved));
      return;
    }
    write_checkpoints_on_worker(self, [done, unserved = std::move(unserved)](status) mutable {
      done(std::move(unserved));
    });
  };
  load_plans(self, plans, finish);
}

void load_plans(self_ptr self, const std::vector<std::shared_ptr<open_plan>>& plans,
                std::function<void()> done) {
  // A directory whose earlier deletion is not in the checkpoints yet (that write failed) is not
  // created again before the checkpoints say it is gone.
  const bool record_deletions =
      std::any_of(plans.begin(), plans.end(), [](const auto& p) { return p->needs_recorded_deletion; });
  if (record_deletions) {
    write_checkpoints_on_worker(self, [self, plans, done](status written) {
      for (const auto& plan : plans) {
        if (!plan->needs_recorded_deletion || plan->decided) continue;
        plan->needs_recorded_deletion = false;
        if (written) continue;
        plan->entry.actor = go_offline(self, plan->tp,
                                       "the deletion of its previous directory is not in the "
                                       "checkpoints yet: " + written.err().message);
        plan->decided = true;
        plan->outcome = plan->entry;
      }
      load_plans(self, plans, done);
    });
    return;
  }
  io_batch batch;
  for (const auto& plan : plans)
    if (!plan->decided) batch.jobs.emplace_back(plan->ro.io_worker, io_task{[plan] { load_partition(*plan); }});
  if (batch.jobs.empty()) {
    done();
    return;
  }
  self->request(spawn_io_fan_out(self->system()), caf::infinite, run_atom_v, std::move(batch))
    .await([done](bool) { done(); }, [done](caf::error&) { done(); });
}

// Replicas this node must drop: their topic is gone, was re-created (another id), or no longer
// places a replica here. Those of the controller are not the snapshot's to judge.
std::vector<topic_partition> stale_replicas(const replica_manager_state& st,
                                            const cluster_metadata& snapshot) {
  std::vector<topic_partition> out;
  for (const auto& [tp, e] : st.replicas) {
    if (e.from_controller) continue;
    auto t = snapshot.topics.find(tp.first);
    bool keep = false;
    if (t != snapshot.topics.end() && t->second.id == e.id) {
      for (const auto& a : t->second.partitions)
        if (a.partition == tp.second &&
            std::find(a.replicas.begin(), a.replicas.end(), st.opts.node.value()) != a.replicas.end())
          keep = true;
    }
    if (!keep) out.push_back(tp);
  }
  return out;
}

void reconfigure_replicas(self_ptr self, bool from_controller, const std::string& name,
                          const topic_id& id, const std::map<std::string, std::string>& configs) {
  auto& st = self->state;
  const bool any_id = std::all_of(id.begin(), id.end(), [](uint8_t b) { return b == 0; });
  for (auto it = st.replicas.lower_bound(topic_partition{name, 0});
       it != st.replicas.end() && it->first.first == name; ++it) {
    auto& e = it->second;
    if (e.from_controller != from_controller || (!any_id && e.id != id) || e.configs == configs)
      continue;
    auto cfg = effective_replica_config(configs, st.opts.log_defaults, st.opts.min_insync_replicas);
    if (!cfg) {
      spdlog::error("{}: keeps its configs: the new ones do not apply: {}", log_name(st, it->first),
                    cfg.err().to_string());
      continue;
    }
    e.configs = configs;
    if (!e.offline) self->send(e.actor, reconfig_atom_v, std::move(*cfg));
  }
}

void drop_replica(self_ptr self, const topic_partition& tp, bool remove, std::function<void()> done) {
  auto& st = self->state;
  auto it = st.replicas.find(tp);
  if (it == st.replicas.end()) {
    done();
    return;
  }
  auto entry = it->second;
  st.replicas.erase(it);
  if (remove) {
    forget(st, tp);
    st.unrecorded_deletions.insert(tp);
  }
  const auto dir = partition_dir(st, tp);
  auto finish = [self, dir, remove, done](std::optional<replica_checkpoint> c, topic_partition tp,
                                          bool offline) {
    auto& st = self->state;
    if (!remove) {
      if (c && !offline) record(st, tp, *c);
      done();
      return;
    }
    // What sits at an offline replica's path was not written by a healthy log (a damaged
    // directory, or a stray file): it stays for the operator, as Kafka leaves offline log dirs.
    if (offline) {
      spdlog::warn("node {}: left {} in place: its replica was offline", st.opts.node.value(), dir.string());
      done();
      return;
    }
    // Removing a tree is a file operation per entry: on an I/O worker, awaited so that a topic
    // created again next finds the directory gone.
    auto removed = std::make_shared<status>();
    auto report = [self, dir, removed, done] {
      const auto node = self->state.opts.node.value();
      if (*removed)
        spdlog::info("node {}: deleted {}", node, dir.string());
      else
        spdlog::error("node {}: cannot delete {}: {}", node, dir.string(), removed->err().message);
      done();
    };
    self->request(st.io_workers.front(), caf::infinite, run_atom_v,
                  io_task{[removed, dir] { *removed = remove_tree(dir); }})
      .await([report](bool) { report(); },
             [removed, report](caf::error& e) {
               *removed = from_caf_error(e);
               report();
             });
  };
  self->request(entry.actor, caf::infinite, close_atom_v)
    .await([finish, tp, offline = entry.offline](const replica_checkpoint& c) { finish(c, tp, offline); },
           [finish, tp, offline = entry.offline](caf::error&) { finish(std::nullopt, tp, offline); });
}

caf::result<std::vector<topic_partition>> apply(self_ptr self, const metadata_snapshot& snapshot) {
  auto& st = self->state;
  if (st.stopping)
    return to_caf_error(make_error(errc::not_leader_or_follower, "the replica manager is stopping"));
  if (!snapshot) return to_caf_error(make_error(errc::invalid_config, "empty metadata snapshot"));
  auto rp = self->make_response_promise<std::vector<topic_partition>>();
  auto stale = stale_replicas(st, *snapshot);
  for (const auto& [name, topic] : snapshot->topics) reconfigure_replicas(self, false, name, topic.id, topic.configs);
  auto pending = std::make_shared<countdown>(countdown{stale.size() + 1, nullptr});
  pending->done = [self, snapshot, rp, deleted = !stale.empty()]() mutable {
    auto open = [self, snapshot, rp]() mutable {
      open_new_replicas(self, snapshot, [rp](std::vector<topic_partition> unserved) mutable {
        rp.deliver(std::move(unserved));
      });
    };
    if (!deleted) {
      open();
      return;
    }
    // A failed write leaves the partitions in unrecorded_deletions: load_plans retries it.
    write_checkpoints_on_worker(self, [open](status) mutable { open(); });
  };
  for (const auto& tp : stale) drop_replica(self, tp, true, [pending] { pending->arrive(); });
  if (!stale.empty()) publish_routes(self);
  pending->arrive();
  return rp;
}

namespace {

using closing = std::vector<std::pair<topic_partition, partition_replica_actor>>;
using closed = std::vector<std::pair<topic_partition, replica_checkpoint>>;

// Closes the replicas all at once and answers the checkpoints of those that closed. The manager
// awaits this one answer: awaiting each replica's made it match every answer against all those
// still awaited, quadratic in the replicas (seconds for 10,000).
caf::behavior replica_closer(caf::event_based_actor* self, node_id node) {
  return {
    [self, node](close_atom, closing& replicas) {
      auto rp = self->make_response_promise();
      auto done = std::make_shared<closed>();
      auto pending = std::make_shared<countdown>(countdown{replicas.size() + 1, nullptr});
      pending->done = [self, rp, done]() mutable {
        rp.deliver(std::move(*done));
        self->quit();
      };
      for (auto& [tp, actor] : replicas)
        self->request(actor, caf::infinite, close_atom_v)
          .then(
            [tp = tp, done, pending](const replica_checkpoint& c) {
              done->emplace_back(tp, c);
              pending->arrive();
            },
            [node, tp = tp, pending](caf::error& err) {
              spdlog::error("node {}: closing {}-{} failed: {}", node.value(), tp.first,
                            tp.second, to_string(err));
              pending->arrive();
            });
      pending->arrive();
      return rp;
    },
  };
}

} // namespace

caf::result<bool> stop(self_ptr self) {
  auto& st = self->state;
  auto rp = self->make_response_promise<bool>();
  st.stopping = true;
  // Fetchers first: nothing appends to a replica that is closing.
  if (st.fetchers) {
    self->unlink_from(st.fetchers);
    caf::anon_send_exit(st.fetchers, caf::exit_reason::user_shutdown);
  }
  if (st.peers) {
    self->unlink_from(st.peers);
    caf::anon_send_exit(st.peers, caf::exit_reason::user_shutdown);
  }
  closing replicas;
  // An offline replica is closed too, but its checkpoint entries keep their last values.
  std::set<topic_partition> offline;
  for (const auto& [tp, e] : st.replicas) {
    replicas.emplace_back(tp, e.actor);
    if (e.offline) offline.insert(tp);
  }
  st.replicas.clear();
  publish_routes(self);
  auto finish = [self, rp]() mutable {
    write_checkpoints_on_worker(self, [self, rp](status s) mutable {
      if (!s) rp.deliver(to_caf_error(s.err()));
      else rp.deliver(true);
      // Queued behind the closes of the logs, so the workers stop once those ran.
      for (const auto& w : self->state.io_workers) caf::anon_send(w, close_atom_v);
      self->quit();
    });
  };
  self->request(self->spawn(replica_closer, self->state.opts.node), caf::infinite, close_atom_v,
                std::move(replicas))
    .await(
      [self, finish, offline](closed& done) mutable {
        for (const auto& [tp, c] : done)
          if (offline.count(tp) == 0) record(self->state, tp, c);
        finish();
      },
      [finish](caf::error&) mutable { finish(); });
  return rp;
}

void schedule_checkpoint(self_ptr self) {
  const auto interval = self->state.opts.checkpoint_interval_ms;
  if (interval > 0) self->delayed_send(self, std::chrono::milliseconds(interval), tick_atom_v);
}

replica_manager_actor::behavior_type replica_manager_behavior(self_ptr self,
                                                              replica_manager_options opts,
                                                              std::shared_ptr<routing_registry> routes,
                                                              offset_map recovery_points,
                                                              offset_map high_watermarks) {
  auto& st = self->state;
  st.opts = std::move(opts);
  st.routes = std::move(routes);
  st.recovery_points = std::move(recovery_points);
  st.high_watermarks = std::move(high_watermarks);
  for (int32_t i = 0; i < std::max(st.opts.io_workers, 1); ++i) {
    st.io_workers.push_back(spawn_io_worker(self->system()));
    self->link_to(st.io_workers.back());
  }
  peer_directory_options po;
  po.node = st.opts.node;
  po.self_endpoint = st.opts.endpoint;
  st.peers = spawn_peer_directory(self->system(), po);
  self->link_to(st.peers);
  fetcher_manager_options fo;
  fo.node = st.opts.node;
  fo.num_fetchers = st.opts.num_replica_fetchers;
  fo.incarnation = st.opts.incarnation;
  fo.config = st.opts.fetcher_config;
  fo.sessions = st.peers;
  fo.routes = [r = st.routes] { return r->current(); };
  st.fetchers = spawn_fetcher_manager(self->system(), fo);
  self->link_to(st.fetchers);
  // Replicas are linked: when the manager dies they die with it (and their logs with them). A
  // replica that dies on its own (its log failed) is replaced by an offline one, so clients get
  // KAFKA_STORAGE_ERROR; its checkpoint entries keep their last values.
  self->set_exit_handler([self](caf::exit_msg& em) {
    auto& st = self->state;
    const bool worker = std::any_of(st.io_workers.begin(), st.io_workers.end(),
                                    [&](const auto& w) { return em.source == w.address(); });
    if (worker || em.source == st.peers.address() || em.source == st.fetchers.address()) {
      spdlog::error("node {}: replication stopped: {}", st.opts.node.value(), to_string(em.reason));
      self->quit(em.reason);
      return;
    }
    for (auto& [tp, e] : st.replicas) {
      if (caf::actor_cast<caf::actor_addr>(e.actor) != em.source) continue;
      e.actor = go_offline(self, tp, "its replica stopped: " + from_caf_error(em.reason).message);
      e.offline = true;
      publish_routes(self);
      return;
    }
  });
  schedule_checkpoint(self);
  return {
    [self](apply_atom, const metadata_snapshot& snapshot) { return apply(self, snapshot); },
    [self](lookup_atom, const std::string& topic, int32_t partition)
      -> caf::result<partition_replica_actor> {
      auto& st = self->state;
      auto it = st.replicas.find(topic_partition{topic, partition});
      if (it == st.replicas.end())
        return to_caf_error(make_error(errc::unknown_topic_or_partition,
                                       "node " + std::to_string(st.opts.node.value()) +
                                         " has no replica of " + topic + "-" +
                                         std::to_string(partition)));
      return it->second.actor;
    },
    [self](checkpoint_atom) -> caf::result<bool> {
      auto rp = self->make_response_promise<bool>();
      checkpoint_all(self, [rp](bool written) mutable { rp.deliver(written); });
      return rp;
    },
    [self](tick_atom) {
      auto& st = self->state;
      if (st.stopping) return;
      schedule_checkpoint(self);
      if (st.periodic_checkpoint_running) return;
      st.periodic_checkpoint_running = true;
      checkpoint_all(self, [self](bool) { self->state.periodic_checkpoint_running = false; });
    },
    [self](stop_atom) { return stop(self); },
    [self](leaderisr_atom, const capnp_frame& f) { return leader_and_isr(self, f); },
    [self](metadata_atom, const capnp_frame& f) { return update_metadata(self, f); },
    [self](stopreplica_atom, const capnp_frame& f) { return stop_replica(self, f); },
    [self](alterisr_atom, alter_partition_request& req) { return forward_isr_change(self, req); },
  };
}

} // namespace

result<replica_config> effective_replica_config(const std::map<std::string, std::string>& topic_configs,
                                                const log_config& defaults,
                                                int32_t default_min_insync_replicas) {
  static constexpr const char* min_isr_key = "min.insync.replicas";
  replica_config out;
  out.min_insync_replicas = default_min_insync_replicas;
  auto log_configs = topic_configs;
  if (auto it = log_configs.find(min_isr_key); it != log_configs.end()) {
    const auto& text = it->second;
    int32_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc{} || end != text.data() + text.size() || v < 1)
      return make_error(errc::invalid_config,
                        std::string(min_isr_key) + ": '" + text + "' is not an integer >= 1");
    out.min_insync_replicas = v;
    log_configs.erase(it);
  }
  if (auto it = log_configs.find(leader_throttle_key); it != log_configs.end()) {
    auto rate = parse_throttled_rate(it->second);
    if (!rate) return rate.err();
    out.leader_replication_throttled_rate = *rate;
    log_configs.erase(it);
  }
  // The controller's election rules read it (validated at topic creation); the log does not.
  log_configs.erase(unclean_leader_election_key);
  auto log = log_config::from_map(log_configs, defaults);
  if (!log) return log.err();
  out.log = *log;
  return out;
}

result<replica_manager_actor> spawn_replica_manager(caf::actor_system& sys,
                                                    replica_manager_options options,
                                                    std::shared_ptr<routing_registry> routes) {
  if (auto made = make_directories(options.data_dir); !made) return made.err();
  auto read = [&](const char* name, const char* consequence) {
    const auto file = options.data_dir / name;
    auto points = read_offset_checkpoint(file);
    if (points) return std::move(*points);
    spdlog::warn("node {}: ignoring {} ({}): {}", options.node.value(), file.string(), consequence,
                 points.err().to_string());
    return offset_map{};
  };
  auto recovery_points = read(recovery_point_checkpoint_name, "every segment will be re-validated");
  auto high_watermarks = read(high_watermark_checkpoint_name, "damage is judged by the recovery points alone");
  if (!routes) routes = std::make_shared<routing_registry>();
  return sys.spawn(replica_manager_detail::replica_manager_behavior, std::move(options),
                   std::move(routes), std::move(recovery_points), std::move(high_watermarks));
}

} // namespace capstan
