// The partition replica actor: one per partition hosted on this node, leader or follower as the
// controller's LeaderAndIsr says (replica_manager_actor hands it a replica_role). It owns the
// partition log actor. As leader it adds what Kafka's Partition adds to a log: acks and
// min.insync.replicas, the high watermark moved by followers' fetches, the ISR, long-polled
// consumer fetches below the HW, ListOffsets (replica_leader.cpp, replica_reads.cpp). As follower
// it takes what its fetcher brings (replica_follower.cpp).
//
// A replica starts as a follower of nobody (epoch -1) and serves nothing until its first role.
// Ordering: the log handles appends and reads in the order sent, so a read issued after the HW
// moved past an append sees that append.

#include "actors/replica/partition_replica_actor.hpp"

#include <algorithm>
#include <chrono>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/log/partition_log_actor.hpp"
#include "actors/replica/log_call.hpp"
#include "actors/replica/partition_replica_state.hpp"
#include "runtime/actor/caf_error.hpp"

namespace capstan {

namespace replica_detail {

caf::error fail_with(errc code, std::string text) { return to_caf_error(make_error(code, std::move(text))); }

std::string partition_name(const replica_state& st) {
  return st.opts.topic + "-" + std::to_string(st.opts.partition);
}

caf::error not_leader(const replica_state& st) {
  if (st.closing) return fail_with(errc::not_leader_or_follower, st.log_name + " is closing");
  return fail_with(errc::not_leader_or_follower,
                   st.log_name + " is not the leader" +
                     (st.leader_node.value() >= 0 ? " (node " + std::to_string(st.leader_node.value()) +
                                                      " is, at epoch " + std::to_string(st.epoch.value()) + ")"
                                                  : ""));
}

timestamp_ms now_ms(self_ptr self) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(self->clock().now().time_since_epoch())
    .count();
}

void arm_tick(self_ptr self, std::chrono::steady_clock::time_point due) {
  if (self->state.tick.arm(due))
    self->delayed_send(self, std::max(due - self->clock().now(), caf::timespan{0}), tick_atom_v);
}

} // namespace replica_detail

namespace {

using namespace replica_detail;

// Expires parked fetches (answered with what is there), acks=-1 produces (REQUEST_TIMED_OUT)
// and produces that waited for a leadership in vain (NOT_LEADER_OR_FOLLOWER), and arms the tick
// for the earliest deadline left.
void on_tick(self_ptr self) {
  auto& st = self->state;
  const auto now = self->clock().now();
  st.tick.arrived(now);
  for (auto it = st.pending_acks.begin(); it != st.pending_acks.end();) {
    if (it->second.deadline > now) {
      ++it;
      continue;
    }
    it->second.rp.deliver(fail_with(errc::request_timed_out,
                                    st.log_name + ": the ISR did not reach offset " +
                                      std::to_string(it->first.value() - 1) + " in time"));
    it = st.pending_acks.erase(it);
  }
  if (!st.parked.empty()) answer_parked(self, st.parked.take_expired(now));
  refuse_awaiting_leadership(self, now);
  auto next = st.parked.next_deadline();
  for (const auto& [end, p] : st.pending_acks)
    if (!next || p.deadline < *next) next = p.deadline;
  for (const auto& w : st.awaiting_leadership)
    if (!next || w.deadline < *next) next = w.deadline;
  if (next) arm_tick(self, *next);
}

// Answers every caller still waiting here (acks=-1 produces, parked fetches, requests out at the
// log) with `answer`, then quits with `reason`: CAF 0.17 drops an undelivered promise silently, so
// each caller would otherwise wait out its own timeout.
void quit_answering(self_ptr self, const caf::error& answer, const caf::error& reason) {
  auto& st = self->state;
  for (auto& [end, p] : st.pending_acks) p.rp.deliver(answer);
  st.pending_acks.clear();
  for (auto& w : st.awaiting_leadership) w.rp.deliver(answer);
  st.awaiting_leadership.clear();
  for (auto& [id, rp] : st.parked_promises) rp.deliver(answer);
  st.parked_promises.clear();
  st.parked.take_all();
  st.held.fail_all(answer);
  self->quit(reason);
}

caf::result<bool> become(self_ptr self, const replica_role& role) {
  auto& st = self->state;
  if (st.closing) return not_leader(st);
  if (role.epoch < st.epoch)
    return fail_with(errc::fenced_leader_epoch,
                     st.log_name + ": leader epoch " + std::to_string(role.epoch.value()) +
                       " is older than the current " + std::to_string(st.epoch.value()));
  if (role.leader == st.opts.node) return become_leader(self, role);
  return become_follower(self, role);
}

void reconfigure(self_ptr self, replica_config config) {
  auto& st = self->state;
  if (config.min_insync_replicas != st.opts.min_insync_replicas) {
    spdlog::info("{}: min.insync.replicas {} -> {}", st.log_name, st.opts.min_insync_replicas,
                 config.min_insync_replicas);
    st.opts.min_insync_replicas = config.min_insync_replicas;
    if (st.is_leader()) {
      if (st.leader->set_min_insync_replicas(config.min_insync_replicas)) on_hw_advanced(self);
      if (!st.leader->enough_replicas())
        fail_pending_acks(self, errc::not_enough_replicas_after_append,
                          "min.insync.replicas was raised above the ISR after the append");
    }
  }
  if (config.leader_replication_throttled_rate != st.opts.leader_replication_throttled_rate) {
    spdlog::info("{}: leader.replication.throttled.rate {} -> {} bytes/s", st.log_name,
                 st.opts.leader_replication_throttled_rate,
                 config.leader_replication_throttled_rate);
    st.opts.leader_replication_throttled_rate = config.leader_replication_throttled_rate;
    st.throttle.set_rate(config.leader_replication_throttled_rate, self->clock().now());
  }
  st.opts.config = config.log;
  self->send(st.log, reconfig_atom_v, std::move(config.log));
}

caf::result<replica_checkpoint> close(self_ptr self) {
  auto& st = self->state;
  auto rp = self->make_response_promise<replica_checkpoint>();
  if (st.closing) {
    rp.deliver(fail_with(errc::not_leader_or_follower, st.log_name + " is already closing"));
    return rp;
  }
  st.closing = true;
  fail_pending_acks(self, errc::not_leader_or_follower, "the replica is closing");
  refuse_awaiting_leadership(self);
  // Held while the parked fetches' reads are out: the exit handler answers it if the log dies.
  const auto key = st.held.hold(rp);
  answer_parked(self, st.parked.take_all(), [self, rp, key]() mutable {
    if (!self->state.held.release(key)) return;
    ask_log(self, rp, close_atom_v)
        .then(
            [self, rp](offset recovery_point) mutable {
              auto& st = self->state;
              spdlog::info("{}: closed, high watermark {}, recovery point {}", st.log_name,
                           st.high_watermark().value(), recovery_point.value());
              rp.deliver(replica_checkpoint{recovery_point, st.high_watermark()});
              quit_answering(self, not_leader(st), caf::none);
            },
            [self, rp](caf::error& e) mutable {
              rp.deliver(e);
              quit_answering(self, e, e);
            });
  });
  return rp;
}

replica_status status_of(const replica_state& st) {
  replica_status s;
  s.leader = st.is_leader();
  s.epoch = st.epoch;
  s.leader_node = st.leader_node;
  s.high_watermark = st.high_watermark();
  s.log_start = st.log_start;
  s.log_end = st.log_end;
  s.replicas = static_cast<int32_t>(st.replicas.size());
  if (st.leader) {
    s.isr = static_cast<int32_t>(st.leader->isr().size());
    s.partition_epoch = st.leader->partition_epoch();
  }
  return s;
}

partition_replica_actor::behavior_type partition_replica_behavior(self_ptr self,
                                                                  partition_replica_options opts,
                                                                  partition_log_actor log) {
  auto& st = self->state;
  st.opts = std::move(opts);
  st.throttle.set_rate(st.opts.leader_replication_throttled_rate, self->clock().now());
  st.log_name = partition_name(st) + " on node " + std::to_string(st.opts.node.value());
  st.log = log;
  self->link_to(log);
  // A failed log (its disk failed) or a dying manager takes the replica down, and every caller
  // waiting here is answered with that reason.
  self->set_exit_handler([self](caf::exit_msg& em) {
    if (em.reason) quit_answering(self, em.reason, em.reason);
  });
  // Nothing else is served before the log's offsets are known.
  self->request(log, caf::infinite, info_atom_v)
    .await(
      [self](const log_info& info) {
        auto& st = self->state;
        st.log_start = info.log_start;
        st.log_end = info.log_end;
        // The checkpointed HW, or (none known) the log start: a follower learns the real one from
        // its leader, and a leader alone in its ISR moves it to its log end at once.
        st.follower_hw = std::clamp(st.opts.high_watermark, info.log_start, info.log_end);
      },
      [self](caf::error& e) {
        spdlog::error("{}: cannot read the log's offsets: {}", self->state.log_name, to_string(e));
        self->quit(e);
      });
  return {
    [self](produce_atom, produce_request& req) { return produce(self, req); },
    [self](fetch_atom, const fetch_request& req) { return consumer_fetch(self, req); },
    [self](offsets_atom, timestamp_ms ts) { return list_offsets(self, ts); },
    [self](info_atom) -> caf::result<log_info> {
      auto rp = self->make_response_promise<log_info>();
      ask_log(self, rp, info_atom_v).then([rp](const log_info& info) mutable { rp.deliver(info); });
      return rp;
    },
    [self](checkpoint_atom) -> caf::result<replica_checkpoint> {
      auto rp = self->make_response_promise<replica_checkpoint>();
      ask_log(self, rp, info_atom_v).then([self, rp](const log_info& info) mutable {
        rp.deliver(replica_checkpoint{info.recovery_point, self->state.high_watermark()});
      });
      return rp;
    },
    [self](status_atom) { return status_of(self->state); },
    [self](become_atom, const replica_role& role) { return become(self, role); },
    [self](reconfig_atom, replica_config& config) { reconfigure(self, std::move(config)); },
    [self](ffetch_atom, follower_fetch_request& req) { return follower_fetch(self, req); },
    [self](epochend_atom, leader_epoch current, leader_epoch requested) {
      return answer_epoch(self, current, requested);
    },
    [self](position_atom) { return position(self); },
    [self](ftruncate_atom, leader_epoch followed, epoch_end answer) {
      return truncate_by_epoch(self, followed, answer);
    },
    [self](replicate_atom, replicate_request& req) { return replicate(self, req); },
    [self](restart_atom, leader_epoch followed, offset start) { return restart_at(self, followed, start); },
    [self](close_atom) { return close(self); },
    [self](tick_atom) { on_tick(self); },
    [self](isrcheck_atom) { check_isr(self); },
  };
}

} // namespace

partition_log_options log_options_of(const partition_replica_options& options) {
  partition_log_options log_opts;
  log_opts.dir = options.dir;
  log_opts.log_name = options.topic + "-" + std::to_string(options.partition) + " on node " +
                      std::to_string(options.node.value());
  log_opts.config = options.config;
  log_opts.recovery_point = options.recovery_point;
  log_opts.dir_unsynced = options.dir_unsynced;
  log_opts.clock = options.clock;
  log_opts.schedule_background_work = options.schedule_background_work;
  log_opts.worker = options.io_worker;
  return log_opts;
}

result<partition_replica_actor> spawn_partition_replica(caf::actor_system& sys,
                                                        partition_replica_options options) {
  auto log = open_partition_log(sys, log_options_of(options));
  if (!log) return log.err();
  return sys.spawn(partition_replica_behavior, std::move(options), *log);
}

partition_replica_actor spawn_partition_replica(caf::actor_system& sys,
                                                partition_replica_options options,
                                                loaded_partition_log log) {
  auto actor = spawn_partition_log(sys, log_options_of(options), std::move(log));
  return spawn_partition_replica(sys, std::move(options), actor);
}

partition_replica_actor spawn_partition_replica(caf::actor_system& sys,
                                                partition_replica_options options,
                                                partition_log_actor log) {
  return sys.spawn(partition_replica_behavior, std::move(options), log);
}

} // namespace capstan
