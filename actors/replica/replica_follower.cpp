// The follower side of a partition replica: what its fetcher asks of it. It appends the leader's
// batches verbatim (the log records each new leader epoch they carry), truncates where the
// leader's epochs say its log diverged (KIP-101/279, truncation.hpp), and keeps its high
// watermark at min(the leader's, its own log end). Every request names the leader epoch the
// fetcher follows; one from an older leadership is FENCED_LEADER_EPOCH and changes nothing.

#include <algorithm>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/replica/log_call.hpp"
#include "actors/replica/partition_replica_state.hpp"
#include "runtime/actor/caf_error.hpp"

namespace capstan::replica_detail {

namespace {

caf::error check_following(const replica_state& st, leader_epoch followed) {
  if (st.closing || st.role != role_kind::follower)
    return fail_with(errc::not_leader_or_follower, partition_name(st) + " is not a follower");
  if (followed != st.epoch)
    return fail_with(errc::fenced_leader_epoch,
                     partition_name(st) + " follows leader epoch " + std::to_string(st.epoch.value()) +
                       ", not " + std::to_string(followed.value()));
  return caf::none;
}

void set_log_end(replica_state& st, offset end) {
  st.log_end = end;
  st.follower_hw = std::min(st.follower_hw, end);
}

} // namespace

caf::result<bool> become_follower(self_ptr self, const replica_role& role) {
  auto& st = self->state;
  const bool was_leader = st.is_leader();
  if (was_leader) {
    st.follower_hw = st.leader->high_watermark();
    fail_pending_acks(self, errc::not_leader_or_follower,
                      "leadership moved to node " + std::to_string(role.leader.value()));
    // Parked consumer fetches are answered with what is below the HW, as at their deadline.
    answer_parked(self, st.parked.take_all());
    st.watchers.clear();
  }
  st.leader.reset();
  st.bytes_above_hw.clear();
  st.role = role_kind::follower;
  st.epoch = role.epoch;
  st.leader_node = role.leader;
  st.replicas = role.replicas;
  refuse_awaiting_leadership(self);
  spdlog::info("{}: follower of node {} at leader epoch {}{}, log end {}, high watermark {}",
               st.log_name, role.leader.value(), role.epoch.value(), was_leader ? " (was leader)" : "",
               st.log_end.value(), st.follower_hw.value());
  return true;
}

caf::result<follower_position> position(self_ptr self) {
  auto rp = self->make_response_promise<follower_position>();
  ask_log(self, rp, info_atom_v).then([self, rp](const log_info& info) mutable {
    auto& st = self->state;
    st.log_start = info.log_start;
    set_log_end(st, info.log_end);
    rp.deliver(follower_position{info.latest_epoch, info.log_end, st.follower_hw, info.log_start});
  });
  return rp;
}

caf::result<truncation_decision> truncate_by_epoch(self_ptr self, leader_epoch followed,
                                                   epoch_end leader_answer) {
  auto& st = self->state;
  if (auto e = check_following(st, followed)) return e;
  auto rp = self->make_response_promise<truncation_decision>();
  // Its own end of the epoch the leader named, then the rule, then the cut; nothing else runs
  // in between, so no append can slip past the decision.
  self->request(st.log, caf::infinite, epoch_atom_v, leader_answer.epoch)
    .await(
      [self, rp, leader_answer](const epoch_end& own) mutable {
        auto& st = self->state;
        auto d = decide_truncation(own, st.log_end, st.follower_hw, leader_answer);
        if (d.truncate_to >= st.log_end && d.complete) {
          rp.deliver(d);
          return;
        }
        // Incomplete at the log end: this replica's latest epochs hold no record the leader lacks
        // (an epoch it led without writing). The cut at the log end drops those epochs, so the
        // next round asks with an older one instead of the same one for ever.
        d.truncate_to = std::min(d.truncate_to, st.log_end);
        spdlog::info("{}: truncates to offset {} (its log ended at {}): the leader ends epoch {} at "
                     "{}, this replica ends it at {}",
                     st.log_name, d.truncate_to.value(), st.log_end.value(),
                     leader_answer.epoch.value(), leader_answer.end.value(), own.end.value());
        self->request(st.log, caf::infinite, truncate_atom_v, d.truncate_to)
          .await(
            [self, rp, d](offset end) mutable {
              const bool moved_down = end < self->state.log_end;
              set_log_end(self->state, end);
              if (moved_down && self->state.opts.truncated) self->state.opts.truncated();
              rp.deliver(truncation_decision{end, d.complete});
            },
            [rp](caf::error& e) mutable { rp.deliver(std::move(e)); });
      },
      [rp](caf::error& e) mutable { rp.deliver(std::move(e)); });
  return rp;
}

caf::result<offset> replicate(self_ptr self, replicate_request& req) {
  auto& st = self->state;
  if (auto e = check_following(st, req.epoch)) return e;
  auto take_hw = [](replica_state& st, offset leader_hw) {
    st.follower_hw = std::max(st.follower_hw, std::min(leader_hw, st.log_end));
  };
  if (req.batches.size() == 0) {
    take_hw(st, req.leader_high_watermark);
    return st.log_end;
  }
  auto rp = self->make_response_promise<offset>();
  const auto epoch = req.epoch;
  const auto leader_hw = req.leader_high_watermark;
  ask_log(self, rp, append_atom_v,
          append_request{std::move(req.batches), append_origin::replication, epoch})
      .then([self, rp, leader_hw, take_hw](const append_result& res) mutable {
        auto& st = self->state;
        st.log_start = std::max(st.log_start, res.log_start);
        st.log_end = std::max(st.log_end, res.last + 1);
        take_hw(st, leader_hw);
        rp.deliver(st.log_end);
      });
  return rp;
}

caf::result<offset> restart_at(self_ptr self, leader_epoch followed, offset start) {
  auto& st = self->state;
  if (auto e = check_following(st, followed)) return e;
  spdlog::warn("{}: its log end {} is below the leader's log start {}; restarts empty there",
               st.log_name, st.log_end.value(), start.value());
  auto rp = self->make_response_promise<offset>();
  self->request(st.log, caf::infinite, reset_atom_v, start)
    .await(
      [self, rp](offset end) mutable {
        auto& st = self->state;
        st.log_start = end;
        st.log_end = end;
        st.follower_hw = end;
        rp.deliver(end);
      },
      [rp](caf::error& e) mutable { rp.deliver(std::move(e)); });
  return rp;
}

} // namespace capstan::replica_detail
