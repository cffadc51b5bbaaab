// The leader side of a partition replica: produce with acks and min.insync.replicas, follower
// fetches (they move the HW and the ISR), OffsetsForLeaderEpoch answers, and ISR changes proposed
// to the controller. The rules are leader_state's (actors/replica/leader_state.hpp) and
// docs/replication.md's; this file wires them to messages.

#include <algorithm>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/countdown.hpp"
#include "actors/replica/log_call.hpp"
#include "actors/replica/partition_replica_state.hpp"
#include "runtime/actor/caf_error.hpp"

namespace capstan::replica_detail {

namespace {

void notify_watchers(self_ptr self) {
  auto& st = self->state;
  for (const auto& w : st.watchers) self->send(w, notify_atom_v);
  st.watchers.clear();
}

// The answer to an append this replica made as leader at `epoch`.
void on_appended(self_ptr self, const append_result& res, int64_t size, leader_epoch epoch) {
  auto& st = self->state;
  // Answered after the replica stopped leading at that epoch: its log may have been truncated
  // since (a follower cuts what the new leader's epochs say it lacks, and this append is what it
  // cuts first), so the append's end says nothing about the log now. Taken, it put a follower's
  // log end past its log: an empty fetch answer handed that end to the fetcher, which then
  // fetched past the offsets in between and left a hole in a log that rejoined the ISR (a safety
  // run: a leader paused with a produce queued, resumed, and truncated that append away).
  if (!st.is_leader() || st.epoch != epoch) return;
  st.log_start = std::max(st.log_start, res.log_start);
  // A producer's retry answered with its first offsets: nothing new to count or replicate.
  if (res.duplicate) return;
  st.log_end = std::max(st.log_end, res.last + 1);
  st.bytes_above_hw[res.last + 1] += size;
  notify_watchers(self);
  if (st.leader->on_leader_append(res.last + 1)) on_hw_advanced(self);
}

void send_proposal(self_ptr self, const isr_proposal& proposal);

void apply_committed_isr(self_ptr self, std::vector<node_id> isr, int32_t partition_epoch) {
  auto& st = self->state;
  if (!st.is_leader()) return;
  const auto before = st.leader->isr().size();
  const bool advanced = st.leader->on_isr_committed(std::move(isr), partition_epoch);
  const auto after = st.leader->isr().size();
  if (after != before)
    spdlog::info("{}: ISR {} from {} to {} replicas at partition epoch {}", st.log_name,
                 after < before ? "shrinks" : "expands", before, after, partition_epoch);
  if (advanced) on_hw_advanced(self);
  if (!st.leader->enough_replicas())
    fail_pending_acks(self, errc::not_enough_replicas_after_append,
                      "the ISR shrank below min.insync.replicas after the append");
}

void send_proposal(self_ptr self, const isr_proposal& proposal) {
  auto& st = self->state;
  if (!st.opts.alter_sink) {
    // No controller to ask (a replica outside a node, in tests): the change commits at once,
    // as a controller of one would.
    apply_committed_isr(self, proposal.isr, proposal.partition_epoch + 1);
    return;
  }
  alter_partition_request req{topic_partition{st.opts.topic, st.opts.partition}, st.opts.id,
                              st.epoch, proposal.partition_epoch, proposal.isr,
                              proposal.incarnations};
  const auto epoch = st.epoch;
  self->request(st.opts.alter_sink, std::chrono::seconds(30), alterisr_atom_v, std::move(req))
    .then(
      [self, epoch](alter_partition_result& res) {
        auto& st = self->state;
        if (!st.is_leader() || st.epoch != epoch) return;
        if (res.epoch != epoch) {
          // The controller answered for another leadership; its LeaderAndIsr will follow. Until
          // then this leader may propose again rather than wait on an answer that never comes.
          spdlog::warn("{}: the controller answered the ISR change for leader epoch {}, not {}",
                       st.log_name, res.epoch.value(), epoch.value());
          st.leader->on_proposal_failed();
          return;
        }
        apply_committed_isr(self, std::move(res.isr), res.partition_epoch);
      },
      [self, epoch](caf::error& e) {
        auto& st = self->state;
        if (!st.is_leader() || st.epoch != epoch) return;
        spdlog::warn("{}: the controller did not take the ISR change: {}", st.log_name,
                     from_caf_error(e).to_string());
        st.leader->on_proposal_failed();
      });
}

void maybe_expand(self_ptr self) {
  auto& st = self->state;
  if (auto p = st.leader->propose_expand()) send_proposal(self, *p);
}

} // namespace

// Kafka's order (Partition.getLocalLog): the epoch before the role, so a follower that learned of
// this replica's leadership first hears that this replica is behind, not that it does not lead.
caf::error check_epoch(const replica_state& st, leader_epoch current) {
  if (st.closing) return not_leader(st);
  if (current < st.epoch)
    return fail_with(errc::fenced_leader_epoch,
                     partition_name(st) + ": leader epoch " + std::to_string(current.value()) +
                       " is older than the current " + std::to_string(st.epoch.value()));
  if (current > st.epoch)
    return fail_with(errc::unknown_leader_epoch,
                     partition_name(st) + ": leader epoch " + std::to_string(current.value()) +
                         " is newer than this replica's " + std::to_string(st.epoch.value()));
  if (!st.is_leader()) return not_leader(st);
  return caf::none;
}

void fail_pending_acks(self_ptr self, errc code, const std::string& why) {
  auto& st = self->state;
  for (auto& [end, p] : st.pending_acks) p.rp.deliver(fail_with(code, st.log_name + ": " + why));
  st.pending_acks.clear();
}

void on_hw_advanced(self_ptr self) {
  auto& st = self->state;
  const offset hw = st.high_watermark();
  while (!st.bytes_above_hw.empty() && st.bytes_above_hw.begin()->first <= hw) {
    st.bytes_below_hw += st.bytes_above_hw.begin()->second;
    st.bytes_above_hw.erase(st.bytes_above_hw.begin());
  }
  while (!st.pending_acks.empty() && st.pending_acks.begin()->first <= hw) {
    auto& p = st.pending_acks.begin()->second;
    p.result.log_start = st.log_start;
    p.rp.deliver(p.result);
    st.pending_acks.erase(st.pending_acks.begin());
  }
  if (st.uncounted_end) {
    if (!st.parked.empty()) answer_parked(self, st.parked.take_below(hw));
    if (hw >= *st.uncounted_end) st.uncounted_end.reset();
  }
  if (!st.parked.empty()) answer_parked(self, st.parked.take_ready(st.bytes_below_hw));
}

caf::result<bool> become_leader(self_ptr self, const replica_role& role) {
  auto& st = self->state;
  if (st.is_leader() && role.epoch == st.epoch) {
    // The same leadership with a new ISR (the controller changed it, e.g. fenced a follower) or
    // new replicas (a reassignment). The AlterPartition answer that completed a reassignment may
    // have brought this partition epoch already, without the replicas.
    if (role.partition_epoch >= st.leader->partition_epoch() && role.replicas != st.replicas) {
      spdlog::info("{}: {} replicas at partition epoch {} (were {})", st.log_name,
                   role.replicas.size(), role.partition_epoch, st.replicas.size());
      st.replicas = role.replicas;
      st.leader->set_replicas(role.replicas);
    }
    apply_committed_isr(self, role.isr, role.partition_epoch);
    return true;
  }
  auto rp = self->make_response_promise<bool>();
  // Nothing else is served until the log has recorded where this epoch starts.
  self->request(st.log, caf::infinite, newepoch_atom_v, role.epoch)
    .await(
      [self, role, rp](offset epoch_start) mutable {
        auto& st = self->state;
        st.role = role_kind::leader;
        st.epoch = role.epoch;
        st.leader_node = role.leader;
        st.replicas = role.replicas;
        st.log_end = epoch_start;
        leader_config c;
        c.leader = st.opts.node;
        c.replicas = role.replicas;
        c.isr = role.isr;
        c.partition_epoch = role.partition_epoch;
        c.min_insync_replicas = st.opts.min_insync_replicas;
        c.replica_lag_time_max_ms = st.opts.replica_lag_time_max_ms;
        // A replica that led before keeps its HW (follower_hw is only a follower's): the HW never
        // moves backwards when the same replica is elected again at a newer epoch.
        const offset hw = std::min(st.high_watermark(), epoch_start);
        st.leader.emplace(std::move(c), epoch_start, hw, epoch_start, now_ms(self));
        st.bytes_above_hw.clear();
        st.uncounted_end.reset();
        if (hw < epoch_start) st.uncounted_end = epoch_start;
        if (st.leader->high_watermark() > hw) on_hw_advanced(self);
        spdlog::info("{}: leader at epoch {} (partition epoch {}), offsets {}..{}, high watermark {}, "
                     "ISR of {}",
                     st.log_name, st.epoch.value(), role.partition_epoch, st.log_start.value(),
                     epoch_start.value(), st.high_watermark().value(), st.leader->isr().size());
        if (!st.isr_check_armed && role.replicas.size() > 1) {
          st.isr_check_armed = true;
          self->delayed_send(self, std::chrono::milliseconds(st.opts.replica_lag_time_max_ms / 2),
                             isrcheck_atom_v);
        }
        rp.deliver(true);
        serve_awaiting_leadership(self);
      },
      [self, rp](caf::error& e) mutable {
        spdlog::error("{}: cannot become leader: {}", self->state.log_name, from_caf_error(e).to_string());
        rp.deliver(std::move(e));
        refuse_awaiting_leadership(self);
      });
  return rp;
}

void check_isr(self_ptr self) {
  auto& st = self->state;
  st.isr_check_armed = false;
  if (!st.is_leader() || st.closing) return;
  if (auto p = st.leader->propose_shrink(now_ms(self))) {
    spdlog::warn("{}: proposes to shrink the ISR to {} replicas: a follower has not caught up for "
                 "{} ms",
                 st.log_name, p->isr.size(), st.opts.replica_lag_time_max_ms);
    send_proposal(self, *p);
  }
  st.isr_check_armed = true;
  self->delayed_send(self, std::chrono::milliseconds(std::max<int64_t>(st.opts.replica_lag_time_max_ms / 2, 1)),
                     isrcheck_atom_v);
}

namespace {

// Appends `req` as the leader and answers `rp`: at once for acks=0 (before the append, as Kafka),
// after the append for acks=1, once the HW passes the batch for acks=-1, whose timeout_ms counts
// from `arrived` (a produce that waited for the leadership has used some of it).
void lead_produce(self_ptr self, produce_request req,
                  caf::typed_response_promise<produce_result> rp,
                  std::chrono::steady_clock::time_point arrived) {
  auto& st = self->state;
  if (st.closing || !st.is_leader()) {
    rp.deliver(not_leader(st));
    return;
  }
  if (req.acks != 0 && req.acks != 1 && req.acks != -1) {
    rp.deliver(fail_with(errc::invalid_required_acks,
                         "acks must be 0, 1 or -1, not " + std::to_string(req.acks)));
    return;
  }
  if (req.acks == -1 && !st.leader->enough_replicas()) {
    rp.deliver(fail_with(errc::not_enough_replicas,
                         st.log_name + ": the ISR has " + std::to_string(st.leader->isr().size()) +
                             " replicas, min.insync.replicas is " +
                             std::to_string(st.opts.min_insync_replicas)));
    return;
  }
  const auto size = static_cast<int64_t>(buffer_of(req.batch).size());
  const auto epoch = st.epoch;
  append_request append{std::move(req.batch), append_origin::leader, st.epoch};
  if (req.acks == 0) {
    // Kafka answers acks=0 before appending; a failed append is only logged.
    self->request(st.log, caf::infinite, append_atom_v, std::move(append))
        .then([self, size, epoch](const append_result& res) { on_appended(self, res, size, epoch); },
              [self](caf::error& e) {
                spdlog::warn("{}: acks=0 produce failed: {}", self->state.log_name, to_string(e));
              });
    rp.deliver(produce_result{offset{-1}, no_timestamp, st.log_start});
    return;
  }
  const auto acks = req.acks;
  const auto deadline = arrived + std::chrono::milliseconds(std::max<int32_t>(req.timeout_ms, 0));
  ask_log(self, rp, append_atom_v, std::move(append))
      .then([self, rp, acks, size, deadline, epoch](const append_result& res) mutable {
        auto& st = self->state;
        on_appended(self, res, size, epoch);
        produce_result out{res.first, no_timestamp, st.log_start};
        if (acks == 1) {
          rp.deliver(out);
          return;
        }
        if (!st.is_leader() || st.epoch != epoch) {
          rp.deliver(not_leader(st));
          return;
        }
        if (st.high_watermark() > res.last) {
          rp.deliver(out);
          return;
        }
        // The ISR shrank (or min.insync.replicas rose) while the append was at the log: the HW
        // holds until the ISR grows again, so say so now rather than time out (Kafka's
        // checkEnoughReplicasReachOffset).
        if (!st.leader->enough_replicas()) {
          rp.deliver(fail_with(errc::not_enough_replicas_after_append,
                               st.log_name + ": the ISR has " +
                                   std::to_string(st.leader->isr().size()) +
                                   " replicas after the append, min.insync.replicas is " +
                                   std::to_string(st.opts.min_insync_replicas)));
          return;
        }
        st.pending_acks.emplace(res.last + 1, pending_produce{rp, out, deadline});
        arm_tick(self, deadline);
      });
}

// True iff the node's metadata names this replica leader at a newer epoch than it has: its
// LeaderAndIsr is on the way.
bool leadership_announced(const replica_state& st) {
  if (st.closing || st.is_leader() || !st.opts.announced_leadership) return false;
  const auto announced = st.opts.announced_leadership();
  return announced && *announced > st.epoch;
}

} // namespace

caf::result<produce_result> produce(self_ptr self, produce_request& req) {
  auto& st = self->state;
  auto rp = self->make_response_promise<produce_result>();
  const auto now = self->clock().now();
  if (leadership_announced(st)) {
    const auto wait = std::min<std::chrono::milliseconds>(
        st.opts.leadership_wait, std::chrono::milliseconds(std::max<int32_t>(req.timeout_ms, 0)));
    st.awaiting_leadership.push_back(awaiting_produce{std::move(req), rp, now, now + wait});
    arm_tick(self, now + wait);
    return rp;
  }
  lead_produce(self, std::move(req), rp, now);
  return rp;
}

void refuse_awaiting_leadership(self_ptr self,
                                std::optional<std::chrono::steady_clock::time_point> now) {
  auto& st = self->state;
  std::vector<awaiting_produce> left;
  for (auto& w : std::exchange(st.awaiting_leadership, {})) {
    if (now && w.deadline > *now)
      left.push_back(std::move(w));
    else
      w.rp.deliver(not_leader(st));
  }
  st.awaiting_leadership = std::move(left);
}

void serve_awaiting_leadership(self_ptr self) {
  // In arrival order, before any later message: a producer's batches keep their order.
  for (auto& w : std::exchange(self->state.awaiting_leadership, {}))
    lead_produce(self, std::move(w.req), w.rp, w.arrived);
}

caf::result<follower_fetch_result> follower_fetch(self_ptr self, follower_fetch_request& req) {
  auto& st = self->state;
  follower_fetch_result out;
  // An answer with no records at the follower's offset.
  auto empty = [&] {
    out.high_watermark = st.high_watermark();
    out.log_start = st.log_start;
    out.log_end = st.log_end;
    out.records.first_offset = out.records.next_offset = req.fetch_offset;
    return out;
  };
  auto refuse = [&](const caf::error& e) {
    auto err = from_caf_error(e);
    out.error = err.code;
    out.message = err.message;
    out.high_watermark = st.high_watermark();
    out.log_start = st.log_start;
    out.log_end = st.log_end;
    return out;
  };
  if (auto e = check_epoch(st, req.current_leader_epoch)) return refuse(e);
  if (std::find(st.replicas.begin(), st.replicas.end(), req.replica) == st.replicas.end())
    return refuse(fail_with(errc::not_leader_or_follower,
                            partition_name(st) + " has no replica on node " +
                              std::to_string(req.replica.value())));
  if (req.fetch_offset < st.log_start || req.fetch_offset > st.log_end)
    return refuse(fail_with(errc::offset_out_of_range,
                            partition_name(st) + ": fetch offset " +
                              std::to_string(req.fetch_offset.value()) + " is outside " +
                              std::to_string(st.log_start.value()) + ".." +
                              std::to_string(st.log_end.value())));
  if (st.leader->on_follower_fetch(req.replica, req.fetch_offset, now_ms(self), req.incarnation))
    on_hw_advanced(self);
  maybe_expand(self);
  if (req.fetch_offset == st.log_end || req.max_bytes <= 0) {
    if (req.watcher) st.watchers.insert(req.watcher);
    return empty();
  }
  // A follower outside the ISR reads within leader.replication.throttled.rate. Over it, it gets
  // nothing and no watcher is kept: its session waits out its maxWaitMs and asks again.
  const auto& isr = st.leader->isr();
  const bool throttled = std::find(isr.begin(), isr.end(), req.replica) == isr.end();
  const int32_t max_bytes =
      throttled ? st.throttle.allowance(req.max_bytes, self->clock().now()) : req.max_bytes;
  if (max_bytes <= 0) return empty();
  auto rp = self->make_response_promise<follower_fetch_result>();
  ask_log(self, rp, read_atom_v, read_request{req.fetch_offset, max_bytes})
      .then(
          [self, rp, watcher = req.watcher, throttled](log_slice& slice) mutable {
            auto& st = self->state;
            if (throttled) st.throttle.consumed(static_cast<int64_t>(slice.size));
            if (slice.empty() && watcher) st.watchers.insert(watcher);
            follower_fetch_result res;
            res.high_watermark = st.high_watermark();
            res.log_start = st.log_start;
            res.log_end = st.log_end;
            res.records = std::move(slice);
            rp.deliver(std::move(res));
          },
          [self, rp](caf::error& e) mutable {
            auto err = from_caf_error(e);
            follower_fetch_result res;
            res.error = err.code;
            res.message = err.message;
            res.high_watermark = self->state.high_watermark();
            res.log_start = self->state.log_start;
            res.log_end = self->state.log_end;
            rp.deliver(std::move(res));
          });
  return rp;
}

caf::result<epoch_end> answer_epoch(self_ptr self, leader_epoch current, leader_epoch requested) {
  auto& st = self->state;
  if (auto e = check_epoch(st, current)) return e;
  auto rp = self->make_response_promise<epoch_end>();
  ask_log(self, rp, epoch_atom_v, requested).then([rp](const epoch_end& end) mutable {
    rp.deliver(end);
  });
  return rp;
}

} // namespace capstan::replica_detail
