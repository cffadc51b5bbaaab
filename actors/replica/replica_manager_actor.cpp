// The replica manager actor (one per node): turns metadata snapshots into partition replicas on
// this node and keeps the routing table the RPC thread reads. With one node every replica is the
// leader; LeaderAndIsr handling (epochs, followers) comes with replication.
//
// Ordering: closing a replica and deleting its directory finish (with `await`, holding back other
// messages) before a snapshot's new replicas are opened, so a topic deleted and created again
// under the same name never shares a directory with its predecessor.

#include "actors/replica/replica_manager_actor.hpp"

#include "actors/countdown.hpp"

#include <algorithm>
#include <charconv>
#include <set>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/replica/partition_replica_actor.hpp"
#include "runtime/actor/caf_error.hpp"
#include "runtime/storage/offset_checkpoint.hpp"

namespace capstan {

namespace {

struct replica_entry {
  partition_replica_actor actor;
  topic_id id{};
  // The topic's config overrides the replica was opened with: a change (alterConfigs) reopens it.
  std::map<std::string, std::string> configs;
};

struct replica_manager_state {
  static inline const char* name = "capstan.replica_manager";

  replica_manager_options opts;
  std::shared_ptr<routing_registry> routes;
  std::map<topic_partition, replica_entry> replicas;
  // What recovery-point-offset-checkpoint said at start, updated as replicas close; partitions
  // not opened in this run keep their entry.
  offset_map recovery_points;
  bool stopping = false;
};

using self_ptr = replica_manager_actor::stateful_pointer<replica_manager_state>;

std::filesystem::path partition_dir(const replica_manager_state& st, const topic_partition& tp) {
  return st.opts.data_dir / (tp.first + "-" + std::to_string(tp.second));
}

void publish_routes(self_ptr self) {
  auto table = std::make_shared<routing_table>();
  for (const auto& [tp, e] : self->state.replicas) table->emplace(tp, e.actor);
  self->state.routes->publish(std::move(table));
}

// Opens the replicas of `snapshot` that this node hosts and does not have yet; true iff every one
// opened.
bool open_new_replicas(self_ptr self, const cluster_metadata& snapshot) {
  auto& st = self->state;
  bool all_ok = true;
  for (const auto& [name, topic] : snapshot.topics) {
    for (const auto& a : topic.partitions) {
      if (std::find(a.replicas.begin(), a.replicas.end(), st.opts.node.value()) == a.replicas.end())
        continue;
      const topic_partition tp{name, a.partition};
      if (st.replicas.count(tp) != 0) continue;
      auto cfg = effective_replica_config(topic.configs, st.opts.log_defaults, st.opts.min_insync_replicas);
      if (!cfg) {
        spdlog::error("node {}: cannot open {}-{}: {}", st.opts.node.value(), name, a.partition,
                      cfg.err().to_string());
        all_ok = false;
        continue;
      }
      partition_replica_options ro;
      ro.topic = name;
      ro.partition = a.partition;
      ro.node = st.opts.node;
      ro.dir = partition_dir(st, tp);
      ro.config = cfg->log;
      ro.min_insync_replicas = cfg->min_insync_replicas;
      ro.epoch = leader_epoch{a.leader_epoch};
      auto rp_it = st.recovery_points.find(tp);
      ro.recovery_point = rp_it != st.recovery_points.end() ? rp_it->second : offset{0};
      ro.clock = st.opts.clock;
      ro.schedule_background_work = st.opts.schedule_background_work;
      auto replica = spawn_partition_replica(self->system(), std::move(ro));
      if (!replica) {
        spdlog::error("node {}: cannot open {}-{}: {}", st.opts.node.value(), name, a.partition,
                      replica.err().to_string());
        all_ok = false;
        continue;
      }
      self->link_to(*replica);
      st.replicas.emplace(tp, replica_entry{*replica, topic.id, topic.configs});
    }
  }
  publish_routes(self);
  return all_ok;
}

// Replicas this node must drop: their topic is gone, was re-created (another id), or no longer
// places a replica here.
std::vector<topic_partition> stale_replicas(const replica_manager_state& st,
                                            const cluster_metadata& snapshot) {
  std::vector<topic_partition> out;
  for (const auto& [tp, e] : st.replicas) {
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

// Replicas whose topic configs changed: closed (data kept) and opened again with the new ones,
// as Kafka applies a topic config change to its live log.
std::vector<topic_partition> reconfigured_replicas(const replica_manager_state& st,
                                                   const cluster_metadata& snapshot) {
  std::vector<topic_partition> out;
  for (const auto& [tp, e] : st.replicas) {
    auto t = snapshot.topics.find(tp.first);
    if (t != snapshot.topics.end() && t->second.id == e.id && t->second.configs != e.configs)
      out.push_back(tp);
  }
  return out;
}

caf::result<bool> apply(self_ptr self, const metadata_snapshot& snapshot) {
  auto& st = self->state;
  if (st.stopping)
    return to_caf_error(make_error(errc::not_leader_or_follower, "the replica manager is stopping"));
  if (!snapshot) return to_caf_error(make_error(errc::invalid_config, "empty metadata snapshot"));
  auto rp = self->make_response_promise<bool>();
  auto stale = stale_replicas(st, *snapshot);
  auto reconfigured = reconfigured_replicas(st, *snapshot);
  auto pending =
    std::make_shared<countdown>(countdown{stale.size() + reconfigured.size() + 1, nullptr});
  pending->done = [self, snapshot, rp]() mutable { rp.deliver(open_new_replicas(self, *snapshot)); };
  for (const auto& tp : stale) {
    auto actor = st.replicas.at(tp).actor;
    st.replicas.erase(tp);
    st.recovery_points.erase(tp);
    const auto dir = partition_dir(st, tp);
    auto remove_dir = [self, dir, pending] {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
      if (ec)
        spdlog::error("node {}: cannot delete {}: {}", self->state.opts.node.value(), dir.string(),
                      ec.message());
      else
        spdlog::info("node {}: deleted {}", self->state.opts.node.value(), dir.string());
      pending->arrive();
    };
    self->request(actor, caf::infinite, close_atom_v)
      .await([remove_dir](offset) { remove_dir(); },
             [remove_dir](caf::error&) { remove_dir(); });
  }
  for (const auto& tp : reconfigured) {
    auto actor = st.replicas.at(tp).actor;
    st.replicas.erase(tp);
    spdlog::info("node {}: reopening {}-{} with changed topic configs", st.opts.node.value(),
                 tp.first, tp.second);
    self->request(actor, caf::infinite, close_atom_v)
      .await(
        [self, tp, pending](offset point) {
          self->state.recovery_points[tp] = point;
          pending->arrive();
        },
        [pending](caf::error&) { pending->arrive(); });
  }
  if (!stale.empty() || !reconfigured.empty()) publish_routes(self);
  pending->arrive();
  return rp;
}

caf::result<bool> stop(self_ptr self) {
  auto& st = self->state;
  auto rp = self->make_response_promise<bool>();
  st.stopping = true;
  auto replicas = std::move(st.replicas);
  st.replicas.clear();
  publish_routes(self);
  auto pending = std::make_shared<countdown>(countdown{replicas.size() + 1, nullptr});
  pending->done = [self, rp]() mutable {
    auto& st = self->state;
    const auto file = st.opts.data_dir / recovery_point_checkpoint_name;
    if (auto s = write_offset_checkpoint(file, st.recovery_points); !s) {
      spdlog::error("node {}: cannot write {}: {}", st.opts.node.value(), file.string(),
                    s.err().to_string());
      rp.deliver(to_caf_error(s.err()));
    } else {
      rp.deliver(true);
    }
    self->quit();
  };
  for (const auto& [tp, e] : replicas) {
    self->request(e.actor, caf::infinite, close_atom_v)
      .await(
        [self, tp = tp, pending](offset point) {
          self->state.recovery_points[tp] = point;
          pending->arrive();
        },
        [self, tp = tp, pending](caf::error& err) {
          spdlog::error("node {}: closing {}-{} failed: {}", self->state.opts.node.value(),
                        tp.first, tp.second, to_string(err));
          pending->arrive();
        });
  }
  pending->arrive();
  return rp;
}

replica_manager_actor::behavior_type replica_manager_behavior(self_ptr self,
                                                              replica_manager_options opts,
                                                              std::shared_ptr<routing_registry> routes,
                                                              offset_map recovery_points) {
  auto& st = self->state;
  st.opts = std::move(opts);
  st.routes = std::move(routes);
  st.recovery_points = std::move(recovery_points);
  // Replicas are linked: when the manager dies they die with it (and their logs with them), and
  // a replica that dies on its own (its log failed) only leaves the routing table.
  self->set_exit_handler([self](caf::exit_msg& em) {
    auto& st = self->state;
    for (auto it = st.replicas.begin(); it != st.replicas.end(); ++it) {
      if (caf::actor_cast<caf::actor_addr>(it->second.actor) != em.source) continue;
      spdlog::error("node {}: replica {}-{} stopped: {}", st.opts.node.value(), it->first.first,
                    it->first.second, to_string(em.reason));
      st.replicas.erase(it);
      publish_routes(self);
      return;
    }
  });
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
    [self](stop_atom) { return stop(self); },
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
  auto log = log_config::from_map(log_configs, defaults);
  if (!log) return log.err();
  out.log = *log;
  return out;
}

result<replica_manager_actor> spawn_replica_manager(caf::actor_system& sys,
                                                    replica_manager_options options,
                                                    std::shared_ptr<routing_registry> routes) {
  std::error_code ec;
  std::filesystem::create_directories(options.data_dir, ec);
  if (ec)
    return make_error(errc::kafka_storage_error,
                      "cannot create " + options.data_dir.string() + ": " + ec.message());
  const auto file = options.data_dir / recovery_point_checkpoint_name;
  auto points = read_offset_checkpoint(file);
  offset_map recovery_points;
  if (points) recovery_points = std::move(*points);
  else
    spdlog::warn("node {}: ignoring {} (every segment will be re-validated): {}",
                 options.node.value(), file.string(), points.err().to_string());
  if (!routes) routes = std::make_shared<routing_registry>();
  return sys.spawn(replica_manager_behavior, std::move(options), std::move(routes),
                   std::move(recovery_points));
}

} // namespace capstan
