// The replica manager's side of the controller protocol (Kafka's ReplicaManager.
// becomeLeaderOrFollower, stopReplicas, maybeUpdateMetadataCache, and the AlterPartition manager):
// LeaderAndIsr turns this node's replicas into leaders or followers, UpdateMetadata keeps the
// topic configs and peer addresses and becomes the metadata cache clients are answered from, StopReplica closes (and deletes) replicas, and leaders' ISR
// changes go to the active controller as AlterPartition.
//
// Order for followers, as in the seeds' makeFollowers: stop their fetchers, make each replica a
// follower (which fails its delayed operations with NOT_LEADER_OR_FOLLOWER), then hand it to a
// fetcher towards the new leader, which truncates by leader epoch before it fetches.

#include <algorithm>
#include <optional>
#include <set>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/countdown.hpp"
#include "actors/replica/replica_manager_state.hpp"
#include "runtime/actor/caf_error.hpp"
#include "runtime/cluster/link_faults.hpp"
#include "runtime/cluster/topic_validation.hpp"
#include "runtime/storage/file_handle.hpp"
#include "runtime/storage/partition_metadata.hpp"

namespace capstan::replica_manager_detail {

namespace {

constexpr auto controller_request_timeout = std::chrono::seconds(30);

caf::error refusal(errc code, std::string text) { return to_caf_error(make_error(code, std::move(text))); }

std::string tp_name(const topic_partition& tp) { return tp.first + "-" + std::to_string(tp.second); }

bool zero(const topic_id& id) {
  return std::all_of(id.begin(), id.end(), [](uint8_t b) { return b == 0; });
}

// Accepts the request's controller epoch, or says why not (KIP-380's fencing by epoch); the
// sender becomes the controller this node reports ISR changes to.
caf::error accept_controller(self_ptr self, int32_t controller_id, int32_t epoch) {
  auto& st = self->state;
  if (epoch < st.controller_epoch)
    return refusal(errc::stale_controller_epoch,
                   "controller " + std::to_string(controller_id) + " is at epoch " +
                     std::to_string(epoch) + ", node " + std::to_string(st.opts.node.value()) +
                     " has seen " + std::to_string(st.controller_epoch));
  if (epoch > st.controller_epoch)
    spdlog::info("node {}: controller {} at epoch {}", st.opts.node.value(), controller_id, epoch);
  st.controller_epoch = epoch;
  if (auto sender = self->current_sender()) {
    auto controller = caf::actor_cast<controller_sink>(sender);
    const bool changed = controller != st.controller;
    st.controller = controller;
    st.controller_node = node_id{controller_id};
    // An AlterPartition in flight to the old controller may never be answered (its node died).
    if (changed) resend_isr_changes(self);
  }
  return caf::none;
}

// A refusal unless the control message is for this process (its target incarnation is this
// process's, or either is unset).
std::optional<caf::error> not_for_this_process(self_ptr self, const char* what,
                                               const incarnation_bytes& target) {
  const auto& mine = self->state.opts.incarnation;
  const auto unset = [](const incarnation_bytes& id) {
    return std::all_of(id.begin(), id.end(), [](uint8_t b) { return b == 0; });
  };
  if (unset(mine) || unset(target) || target == mine) return std::nullopt;
  spdlog::info("node {}: refuses a {} for another process of this node (an earlier registration)",
               self->state.opts.node.value(), what);
  return refusal(errc::stale_broker_epoch,
                 std::string(what) + " for another registration of node " +
                     std::to_string(self->state.opts.node.value()));
}

// Whether a control message, at its place in the controller's stream, is to be applied. If not,
// `refused` gets INVALID_UPDATE_VERSION for a gap and stays empty for a duplicate (answered as
// applied).
bool in_sequence(self_ptr self, const char* what, int32_t epoch, int64_t sequence, bool full,
                 std::optional<caf::error>& refused) {
  auto& st = self->state;
  switch (st.stream.admit(epoch, sequence, full)) {
  case control_sequence::verdict::apply:
    return true;
  case control_sequence::verdict::duplicate:
    spdlog::debug("node {}: {} {} of controller epoch {} was applied before", st.opts.node.value(),
                  what, sequence, epoch);
    return false;
  case control_sequence::verdict::gap:
    spdlog::info("node {}: {} {} of controller epoch {} does not follow {} of epoch {}: waits for "
                 "the controller's full state",
                 st.opts.node.value(), what, sequence, epoch, st.stream.last(), st.stream.epoch());
    refused = refusal(errc::invalid_update_version,
                      std::string(what) + " " + std::to_string(sequence) + " of controller epoch " +
                          std::to_string(epoch) + " does not follow " +
                          std::to_string(st.stream.last()) + " of epoch " +
                          std::to_string(st.stream.epoch()) + " on node " +
                          std::to_string(st.opts.node.value()));
    return false;
  }
  return false;
}

void learn_peers(self_ptr self, const std::vector<node_endpoint_msg>& endpoints) {
  std::vector<peer_address> peers;
  for (const auto& e : endpoints)
    if (e.node != self->state.opts.node) peers.push_back(peer_address{e.node, e.host, e.cluster_port});
  if (!peers.empty()) self->send(self->state.peers, peers_atom_v, std::move(peers));
}

replica_role role_of(const partition_state_msg& p) {
  return replica_role{p.leader, p.epoch, p.replicas, p.isr, p.partition_epoch};
}

// The topic as the replica manager opens it: configs and id from UpdateMetadata when known.
topic_metadata topic_of(const replica_manager_state& st, const partition_state_msg& p) {
  topic_metadata t;
  t.name = p.tp.first;
  t.id = p.id;
  if (auto it = st.topics.find(p.tp.first); it != st.topics.end() && (zero(p.id) || it->second.id == p.id))
    t.configs = it->second.configs;
  return t;
}

struct applied_states {
  std::vector<partition_state_msg> leaders;
  std::vector<partition_state_msg> followers;
};

using plans_by_partition = std::map<topic_partition, std::shared_ptr<open_plan>>;

partition_assignment assignment_of(const partition_state_msg& p) {
  partition_assignment a;
  a.partition = p.tp.second;
  a.replicas.clear();
  for (auto r : p.replicas) a.replicas.push_back(r.value());
  return a;
}

// The openings sort_states will need: one plan per partition of `states` this node hosts and has
// no replica of yet.
plans_by_partition plan_missing(self_ptr self, const std::vector<partition_state_msg>& states) {
  auto& st = self->state;
  plans_by_partition plans;
  for (const auto& p : states) {
    if (std::find(p.replicas.begin(), p.replicas.end(), st.opts.node) == p.replicas.end() ||
        st.replicas.count(p.tp) != 0 || plans.count(p.tp) != 0)
      continue;
    plans.emplace(p.tp, plan_open(self, topic_of(st, p), assignment_of(p), false));
  }
  return plans;
}

// Checks each partition state and opens missing replicas from their loaded `plans`; what passes
// is sorted into leaders and followers, what does not gets its error in `errors`.
applied_states sort_states(self_ptr self, const std::vector<partition_state_msg>& states,
                           const plans_by_partition& plans, std::vector<partition_error_msg>& errors) {
  auto& st = self->state;
  applied_states out;
  bool checkpoints_changed = false;
  bool opened = false;
  bool leaderless_changed = false;
  for (const auto& p : states) {
    auto refuse = [&](errc code, std::string why) { errors.push_back(partition_error_msg{p.tp, code, std::move(why)}); };
    if (std::find(p.replicas.begin(), p.replicas.end(), st.opts.node) == p.replicas.end()) {
      refuse(errc::unknown_topic_or_partition,
             "node " + std::to_string(st.opts.node.value()) + " is not a replica of " + tp_name(p.tp));
      continue;
    }
    auto it = st.replicas.find(p.tp);
    bool same_leadership = false;
    if (it != st.replicas.end()) {
      auto& e = it->second;
      same_leadership = e.from_controller && e.epoch == p.epoch && e.leader == p.leader;
      if (!zero(e.id) && !zero(p.id) && e.id != p.id) {
        refuse(errc::inconsistent_topic_id, tp_name(p.tp) + " on node " + std::to_string(st.opts.node.value()) +
                                              " belongs to another topic of that name");
        continue;
      }
      if (e.offline) {
        refuse(errc::kafka_storage_error, log_name(st, p.tp) + " is offline");
        continue;
      }
      if (!supersedes(p, e.epoch, e.partition_epoch)) {
        // The same state again is what a full state the controller resends mostly holds.
        const bool same = p.epoch == e.epoch && p.partition_epoch == e.partition_epoch;
        spdlog::log(same ? spdlog::level::debug : spdlog::level::info, "{}: ignores the controller's state at leader epoch {} (partition epoch {}): it "
                     "has {} ({})",
                     log_name(st, p.tp), p.epoch.value(), p.partition_epoch, e.epoch.value(),
                     e.partition_epoch);
        if (p.epoch < e.epoch)
          refuse(errc::fenced_leader_epoch, "leader epoch " + std::to_string(p.epoch.value()) +
                                              " is older than " + std::to_string(e.epoch.value()));
        continue;
      }
    } else {
      auto entry = finish_open(self, *plans.at(p.tp), checkpoints_changed);
      if (!entry) {
        refuse(errc::invalid_config, "the topic's configs do not open " + tp_name(p.tp));
        continue;
      }
      opened = true;
      bool offline = entry->offline;
      st.replicas.emplace(p.tp, std::move(*entry));
      if (offline) {
        refuse(errc::kafka_storage_error, log_name(st, p.tp) + " is offline");
        continue;
      }
    }
    auto& e = st.replicas.at(p.tp);
    e.epoch = p.epoch;
    e.partition_epoch = p.partition_epoch;
    e.leader = p.leader;
    e.from_controller = true;
    if (!zero(p.id)) e.id = p.id;
    if (p.leader == st.opts.node) {
      out.leaders.push_back(p);
    } else if (!same_leadership) {
      if (e.leaderless) {
        e.leaderless.reset();
        leaderless_changed = true;
      }
      out.followers.push_back(p);
    }
    // A follower's ISR-only change (same leader, same leader epoch) changes nothing it does: it
    // keeps fetching where it is, without truncating again.
  }
  if (checkpoints_changed) write_checkpoints_on_worker(self, [](status) {});
  if (opened || leaderless_changed) publish_routes(self);
  return out;
}

// Becomes follower of each state, then hands them to the fetchers grouped by leader.
void make_followers(self_ptr self, std::vector<partition_state_msg> followers,
                    std::shared_ptr<std::vector<partition_error_msg>> errors, std::function<void()> done) {
  auto& st = self->state;
  auto assignments = std::make_shared<std::map<int32_t, std::vector<fetch_assignment>>>();
  auto pending = std::make_shared<countdown>(countdown{followers.size() + 1, nullptr});
  // Routes are published once for the whole batch: a publication copies every route, so one per
  // leaderless partition made a state of 10,000 of them quadratic.
  auto leaderless_found = std::make_shared<bool>(false);
  pending->done = [self, assignments, leaderless_found, done] {
    auto& st = self->state;
    if (*leaderless_found) publish_routes(self);
    // A later LeaderAndIsr for a partition (applied while this one waited for its replicas)
    // names the leadership to follow; this one's assignment of it would be stale.
    for (auto& [leader, list] : *assignments)
      std::erase_if(list, [&st](const fetch_assignment& a) {
        auto it = st.replicas.find(a.tp);
        return it == st.replicas.end() || it->second.epoch != a.epoch;
      });
    std::erase_if(*assignments, [](const auto& kv) { return kv.second.empty(); });
    auto left = std::make_shared<countdown>(countdown{assignments->size() + 1, done});
    for (auto& [leader, list] : *assignments)
      self->request(st.fetchers, caf::infinite, assign_atom_v, leader, std::move(list))
        .then([left](bool) { left->arrive(); }, [left](caf::error&) { left->arrive(); });
    left->arrive();
  };
  for (const auto& p : followers) {
    auto replica = st.replicas.at(p.tp).actor;
    self->request(replica, caf::infinite, become_atom_v, role_of(p))
      .then(
        [self, replica, p, assignments, errors, pending, leaderless_found](bool) {
          if (p.leader.value() < 0) {
            // No leader (offline partition): nothing to fetch from. Its log goes into the node's
            // heartbeats, for the controller to elect the most up-to-date replica once enough
            // are back (docs/controller.md, "Last replica standing").
            self->request(replica, caf::infinite, info_atom_v)
              .then(
                [self, replica, p, pending, leaderless_found](const log_info& info) {
                  auto it = self->state.replicas.find(p.tp);
                  if (it != self->state.replicas.end() && it->second.actor == replica &&
                      it->second.epoch == p.epoch) {
                    it->second.leaderless = replica_log_info{
                        p.id, p.tp.second, info.last_written_epoch.value(), info.log_end.value(),
                        p.epoch.value()};
                    *leaderless_found = true;
                  }
                  pending->arrive();
                },
                [pending](caf::error&) { pending->arrive(); });
            return;
          }
          self->request(replica, caf::infinite, position_atom_v)
            .then(
              [p, assignments, pending](const follower_position& pos) {
                (*assignments)[p.leader.value()].push_back(
                  fetch_assignment{p.tp, p.epoch, pos.log_end, pos.latest_epoch.value() >= 0});
                pending->arrive();
              },
              [p, errors, pending](caf::error& e) {
                auto err = from_caf_error(e);
                errors->push_back(partition_error_msg{p.tp, err.code, err.message});
                pending->arrive();
              });
        },
        [p, errors, pending](caf::error& e) {
          auto err = from_caf_error(e);
          errors->push_back(partition_error_msg{p.tp, err.code, err.message});
          pending->arrive();
        });
  }
  pending->arrive();
}

// The rest of LeaderAndIsr once the new partitions are loaded: opens them, sorts the states,
// and changes roles; answers `rp`.
void apply_states(self_ptr self, const std::vector<partition_state_msg>& states,
                  const plans_by_partition& plans, caf::typed_response_promise<capnp_frame> rp) {
  auto& st = self->state;
  auto errors = std::make_shared<std::vector<partition_error_msg>>();
  auto sorted = sort_states(self, states, plans, *errors);
  std::vector<topic_partition> moving;
  for (const auto& p : sorted.leaders) moving.push_back(p.tp);
  for (const auto& p : sorted.followers) moving.push_back(p.tp);
  // Fetchers let go of every partition whose role changes before any replica changes role.
  self->request(st.fetchers, caf::infinite, unassign_atom_v, std::move(moving))
    .then(
      [self, sorted, errors, rp](bool) mutable {
        auto& st = self->state;
        auto pending = std::make_shared<countdown>(countdown{2, nullptr});
        pending->done = [errors, rp]() mutable {
          rp.deliver(encode(control_response_msg{errc::none, {}, std::move(*errors)}, false));
        };
        auto leaders_left = std::make_shared<countdown>(
          countdown{sorted.leaders.size() + 1, [pending] { pending->arrive(); }});
        for (const auto& p : sorted.leaders) {
          self->request(st.replicas.at(p.tp).actor, caf::infinite, become_atom_v, role_of(p))
            .then([leaders_left](bool) { leaders_left->arrive(); },
                  [p, errors, leaders_left](caf::error& e) {
                    auto err = from_caf_error(e);
                    errors->push_back(partition_error_msg{p.tp, err.code, err.message});
                    leaders_left->arrive();
                  });
        }
        leaders_left->arrive();
        make_followers(self, std::move(sorted.followers), errors, [pending] { pending->arrive(); });
      },
      [rp](caf::error& e) mutable {
        auto err = from_caf_error(e);
        rp.deliver(encode(control_response_msg{err.code, "fetchers: " + err.message, {}}, false));
      });
}

} // namespace

caf::result<capnp_frame> leader_and_isr(self_ptr self, const capnp_frame& frame) {
  auto& st = self->state;
  auto req = decode_leader_and_isr(frame);
  if (!req) {
    spdlog::warn("node {}: malformed LeaderAndIsr: {}", st.opts.node.value(), req.err().to_string());
    return encode(control_response_msg{req.code(), req.err().message, {}}, false);
  }
  if (st.stopping)
    return encode(control_response_msg{errc::not_leader_or_follower, "the node is stopping", {}}, false);
  if (auto e = accept_controller(self, req->controller_id, req->controller_epoch)) {
    auto err = from_caf_error(e);
    return encode(control_response_msg{err.code, err.message, {}}, false);
  }
  std::optional<caf::error> refused = not_for_this_process(self, "LeaderAndIsr", req->target);
  if (refused || !in_sequence(self, "LeaderAndIsr", req->controller_epoch, req->sequence, false, refused)) {
    if (!refused) return encode(control_response_msg{}, false);
    auto err = from_caf_error(*refused);
    return encode(control_response_msg{err.code, err.message, {}}, false);
  }
  learn_peers(self, req->leaders);
  auto rp = self->make_response_promise<capnp_frame>();
  // Partitions new to this node load on the I/O workers first (the manager awaits them).
  auto plans = std::make_shared<plans_by_partition>(plan_missing(self, req->partitions));
  std::vector<std::shared_ptr<open_plan>> to_load;
  for (const auto& [tp, plan] : *plans) to_load.push_back(plan);
  load_plans(self, to_load, [self, req = std::move(*req), plans, rp]() mutable {
    apply_states(self, req.partitions, *plans, rp);
  });
  return rp;
}

namespace {

// A full UpdateMetadata lists every topic and partition of the cluster: a replica the controller
// placed here whose topic is not among them belongs to a topic deleted while its StopReplica was
// lost (or sent to this node's previous process), and one whose partition no longer names this
// node was moved off it by a reassignment meanwhile. Either is closed and deleted, as the
// StopReplica would have. The partition epoch guards against a state older than the one the
// replica runs (the stream is ordered, so this is a second line of defence).
void drop_strays(self_ptr self, const update_metadata_msg& full) {
  auto& st = self->state;
  std::set<topic_id> live;
  for (const auto& t : full.topics) live.insert(t.id);
  std::set<std::pair<topic_id, int32_t>> moved_off;
  for (const auto& p : full.partitions)
    if (std::find(p.replicas.begin(), p.replicas.end(), st.opts.node) == p.replicas.end())
      if (auto it = st.replicas.find(p.tp);
          it != st.replicas.end() && it->second.id == p.id &&
          p.partition_epoch >= it->second.partition_epoch)
        moved_off.insert({p.id, p.tp.second});
  std::vector<topic_partition> strays;
  for (const auto& [tp, e] : st.replicas)
    if (e.from_controller && !zero(e.id) &&
        (live.count(e.id) == 0 || moved_off.count({e.id, tp.second}) != 0))
      strays.push_back(tp);
  if (strays.empty()) return;
  for (const auto& tp : strays)
    spdlog::warn("{}: the controller's metadata no longer places it on this node: deleting the "
                 "replica",
                 log_name(st, tp));
  self->request(st.fetchers, caf::infinite, unassign_atom_v, strays)
    .then([self, strays](bool) {
      auto pending = std::make_shared<countdown>(countdown{strays.size() + 1, nullptr});
      pending->done = [self] { write_checkpoints_on_worker(self, [](status) {}); };
      for (const auto& tp : strays) drop_replica(self, tp, true, [pending] { pending->arrive(); });
      publish_routes(self);
      pending->arrive();
    }, [](caf::error&) {});
}

// A replica moved off this node while the node was down is on disk but not open: the controller
// never named it to this process. Those the checkpoints know whose partition a full UpdateMetadata
// no longer places here are deleted, once their partition.metadata shows the same topic id (a
// directory of an older topic of that name is left to prepare_partition_dir). On an I/O worker,
// awaited, so that a LeaderAndIsr placing the partition here again finds the directory gone.
void drop_unopened_strays(self_ptr self, const update_metadata_msg& full) {
  auto& st = self->state;
  struct candidate {
    topic_partition tp;
    topic_id id;
    std::filesystem::path dir;
    bool removed = false;
  };
  auto found = std::make_shared<std::vector<candidate>>();
  for (const auto& p : full.partitions)
    if (std::find(p.replicas.begin(), p.replicas.end(), st.opts.node) == p.replicas.end() &&
        !zero(p.id) && st.replicas.count(p.tp) == 0 && st.recovery_points.count(p.tp) != 0)
      found->push_back(candidate{p.tp, p.id, partition_dir(st, p.tp)});
  if (found->empty()) return;
  self->request(st.io_workers.front(), caf::infinite, run_atom_v, io_task{[found] {
                  for (auto& c : *found) {
                    auto id = read_partition_metadata(c.dir);
                    if (id && *id && **id == c.id) c.removed = remove_tree(c.dir).ok();
                  }
                }})
    .await(
      [self, found](bool) {
        auto& st = self->state;
        bool any = false;
        for (const auto& c : *found) {
          if (!c.removed) continue;
          spdlog::warn("{}: moved off this node while it was down: deleted {}", log_name(st, c.tp),
                       c.dir.string());
          forget(st, c.tp);
          st.unrecorded_deletions.insert(c.tp);
          any = true;
        }
        if (any) write_checkpoints_on_worker(self, [](status) {});
      },
      [](caf::error&) {});
}

} // namespace

caf::result<capnp_frame> update_metadata(self_ptr self, const capnp_frame& frame) {
  auto& st = self->state;
  auto req = decode_update_metadata(frame);
  if (!req) {
    spdlog::warn("node {}: malformed UpdateMetadata: {}", st.opts.node.value(), req.err().to_string());
    return to_caf_error(req.err());
  }
  if (auto e = accept_controller(self, req->controller_id, req->controller_epoch)) return e;
  std::optional<caf::error> refused = not_for_this_process(self, "UpdateMetadata", req->target);
  if (refused ||
      !in_sequence(self, "UpdateMetadata", req->controller_epoch, req->sequence, req->full, refused)) {
    if (refused) return *refused;
    return capnp_frame{};
  }
  learn_peers(self, req->nodes);
  if (st.opts.metadata_registry) {
    auto previous = st.opts.metadata_registry->current();
    metadata_cache_ptr cache;
    if (req->full || !previous) {
      auto defaults = st.opts.log_defaults.to_map();
      defaults[min_insync_replicas_key] = std::to_string(st.opts.min_insync_replicas);
      cache = std::make_shared<const metadata_cache>(*req, std::move(defaults));
    } else {
      cache = std::make_shared<const metadata_cache>(*previous, *req);
    }
    st.opts.metadata_registry->publish(std::move(cache));
  }
  if (req->full) {
    st.topics.clear();
    drop_strays(self, *req);
    drop_unopened_strays(self, *req);
  }
  for (const auto& id : req->removed_topics)
    std::erase_if(st.topics, [&](const auto& t) { return t.second.id == id; });
  for (auto& t : req->topics) {
    reconfigure_replicas(self, true, t.name, t.id, t.configs);
    st.topics[t.name] = std::move(t);
  }
  return capnp_frame{};
}

caf::result<capnp_frame> stop_replica(self_ptr self, const capnp_frame& frame) {
  auto& st = self->state;
  auto req = decode_stop_replica(frame);
  if (!req) {
    spdlog::warn("node {}: malformed StopReplica: {}", st.opts.node.value(), req.err().to_string());
    return encode(control_response_msg{req.code(), req.err().message, {}}, true);
  }
  if (auto e = accept_controller(self, req->controller_id, req->controller_epoch)) {
    auto err = from_caf_error(e);
    return encode(control_response_msg{err.code, err.message, {}}, true);
  }
  std::optional<caf::error> refused = not_for_this_process(self, "StopReplica", req->target);
  if (refused || !in_sequence(self, "StopReplica", req->controller_epoch, req->sequence, false, refused)) {
    if (!refused) return encode(control_response_msg{}, true);
    auto err = from_caf_error(*refused);
    return encode(control_response_msg{err.code, err.message, {}}, true);
  }
  std::vector<topic_partition> stopping;
  auto errors = std::make_shared<std::vector<partition_error_msg>>();
  for (const auto& p : req->partitions) {
    auto it = st.replicas.find(p.tp);
    if (it == st.replicas.end()) continue;
    if (p.epoch.value() != -2 && p.epoch < it->second.epoch) {
      errors->push_back(partition_error_msg{p.tp, errc::fenced_leader_epoch,
                                            "stop at leader epoch " + std::to_string(p.epoch.value()) +
                                              " is older than " + std::to_string(it->second.epoch.value())});
      continue;
    }
    stopping.push_back(p.tp);
  }
  auto rp = self->make_response_promise<capnp_frame>();
  const bool remove = req->delete_partitions;
  self->request(st.fetchers, caf::infinite, unassign_atom_v, stopping)
    .then(
      [self, stopping, remove, errors, rp](bool) mutable {
        auto pending = std::make_shared<countdown>(countdown{stopping.size() + 1, nullptr});
        pending->done = [self, remove, errors, rp]() mutable {
          auto answer = [errors, rp](status) mutable {
            rp.deliver(encode(control_response_msg{errc::none, {}, std::move(*errors)}, true));
          };
          if (remove)
            write_checkpoints_on_worker(self, std::move(answer));
          else
            answer({});
        };
        for (const auto& tp : stopping) drop_replica(self, tp, remove, [pending] { pending->arrive(); });
        publish_routes(self);
        pending->arrive();
      },
      [rp](caf::error& e) mutable {
        auto err = from_caf_error(e);
        rp.deliver(encode(control_response_msg{err.code, "fetchers: " + err.message, {}}, true));
      });
  return rp;
}

namespace {

// Answers every change of `batch` from the controller's `reply` (or with its error).
void answer_isr_changes(std::vector<isr_change>& batch,
                        const result<alter_partition_response_msg>& reply) {
  std::map<topic_partition, const alter_partition_result_item*> by_tp;
  if (reply && reply->error == errc::none)
    for (const auto& item : reply->partitions) by_tp[item.tp] = &item;
  for (auto& change : batch) {
    if (!reply) {
      change.rp.deliver(to_caf_error(reply.err()));
      continue;
    }
    if (reply->error != errc::none) {
      change.rp.deliver(refusal(reply->error, reply->message));
      continue;
    }
    auto it = by_tp.find(change.item.tp);
    if (it == by_tp.end()) {
      change.rp.deliver(refusal(errc::unknown_server_error,
                                "the controller's answer left out " + tp_name(change.item.tp)));
      continue;
    }
    const auto& item = *it->second;
    if (item.error != errc::none)
      change.rp.deliver(refusal(item.error, item.message));
    else
      change.rp.deliver(
          alter_partition_result{item.leader, item.epoch, item.partition_epoch, item.isr});
  }
}

} // namespace

void send_isr_changes(self_ptr self) {
  auto& st = self->state;
  if (st.isr_changes_in_flight || st.isr_changes_queued.empty()) return;
  std::vector<isr_change> batch;
  alter_partition_msg msg;
  msg.broker = st.opts.node;
  for (auto& [tp, change] : st.isr_changes_queued) {
    msg.partitions.push_back(change.item);
    batch.push_back(std::move(change));
  }
  st.isr_changes_queued.clear();
  if (!st.controller || link_faults::instance().dropped(st.opts.node, st.controller_node)) {
    answer_isr_changes(
        batch, make_error(errc::request_timed_out, "the ISR change to controller " +
                                                       std::to_string(st.controller_node.value()) +
                                                       " is lost: the fault switch cuts the link"));
    return;
  }
  st.isr_changes_sent = std::move(batch);
  st.isr_changes_in_flight = true;
  const auto number = ++st.isr_batch;
  auto answered = [self, number](result<alter_partition_response_msg> reply) {
    auto& st = self->state;
    if (!st.isr_changes_in_flight || st.isr_batch != number) return;
    auto batch = std::exchange(st.isr_changes_sent, {});
    st.isr_changes_in_flight = false;
    answer_isr_changes(batch, reply);
    send_isr_changes(self);
  };
  self->request(st.controller, controller_request_timeout, alterisr_atom_v, encode(msg))
      .then([answered](
                const capnp_frame& reply) { answered(decode_alter_partition_response(reply)); },
            [answered](caf::error& e) { answered(from_caf_error(e)); });
}

void resend_isr_changes(self_ptr self) {
  auto& st = self->state;
  if (!st.isr_changes_in_flight) return;
  for (auto& change : st.isr_changes_sent) {
    if (st.isr_changes_queued.count(change.item.tp) != 0)
      change.rp.deliver(
          refusal(errc::request_timed_out,
                  "the ISR change of " + tp_name(change.item.tp) + " was replaced by a newer one"));
    else
      st.isr_changes_queued.emplace(change.item.tp, std::move(change));
  }
  st.isr_changes_sent.clear();
  st.isr_changes_in_flight = false;
  send_isr_changes(self);
}

caf::result<alter_partition_result> forward_isr_change(self_ptr self, alter_partition_request& req) {
  auto& st = self->state;
  if (!st.controller)
    return refusal(errc::not_leader_or_follower, "node " + std::to_string(st.opts.node.value()) +
                                                   " knows no controller to send the ISR change to");
  if (link_faults::instance().dropped(st.opts.node, st.controller_node))
    return refusal(errc::request_timed_out, "the ISR change of " + tp_name(req.tp) +
                                                " to controller " +
                                                std::to_string(st.controller_node.value()) +
                                                " is lost: the fault switch cuts the link");
  auto rp = self->make_response_promise<alter_partition_result>();
  isr_change change{alter_partition_item{req.tp, req.id, req.epoch, req.partition_epoch, req.isr,
                                          req.incarnations},
                    rp};
  if (auto it = st.isr_changes_queued.find(req.tp); it != st.isr_changes_queued.end()) {
    it->second.rp.deliver(
        refusal(errc::request_timed_out, "the ISR change of " + tp_name(req.tp) +
                                             " was replaced by a newer one before it was sent"));
    it->second = std::move(change);
  } else {
    st.isr_changes_queued.emplace(req.tp, std::move(change));
  }
  send_isr_changes(self);
  return rp;
}
} // namespace capstan::replica_manager_detail
