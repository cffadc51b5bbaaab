#pragma once

// The leader's view of one follower's log (etcd/raft's Progress): how far it is known to match
// (match) and what to send next (next), in one of three states:
//   probe:     where the logs part is unknown; one AppendEntries at a time, resent at heartbeats.
//   replicate: the follower accepted an append; entries stream ahead of acknowledgements, up to
//              max_inflight_appends messages (pipelining).
//   snapshot:  next is compacted away; an InstallSnapshot is out, resent at heartbeats.
// Plain data with the state changes; raft_core decides when they happen.

#include <cstddef>
#include <deque>

#include "actors/controller/raft/raft_types.hpp"

namespace capstan::raft {

enum class progress_state : uint8_t { probe, replicate, snapshot };

class raft_progress {
public:
  // A new leader knows nothing of the follower: probe from right after its own last entry.
  explicit raft_progress(log_index next) : next_(next) {}

  raft_progress(const raft_progress&) = default;
  raft_progress& operator=(const raft_progress&) = default;
  raft_progress(raft_progress&&) = default;
  raft_progress& operator=(raft_progress&&) = default;

  progress_state state() const { return state_; }
  log_index match() const { return match_; }
  log_index next() const { return next_; }
  size_t inflight() const { return inflight_.size(); }

  // The follower's log matches the leader's up to `index`. Returns true iff match grew.
  // Acknowledges every in-flight append up to `index`.
  bool acknowledge(log_index index);

  void become_probe(log_index next);
  // REQUIRES: state() == probe. Streams from match + 1.
  void become_replicate();
  void become_snapshot(log_index snapshot_index);

  // An AppendEntries whose last entry is `last` left in replicate state.
  void sent_entries(log_index last);
  // A probe (or snapshot) left: wait for its answer or the next heartbeat.
  void sent_probe() { probe_sent_ = true; }
  bool probe_sent() const { return probe_sent_; }

  // Heartbeat bookkeeping: whether the follower answered anything since the last heartbeat.
  void responded() { responded_ = true; }
  bool take_responded() {
    bool r = responded_;
    responded_ = false;
    return r;
  }

  // The follower answered at the leader's tick `tick`: active for check-quorum's current window,
  // and last_answer_tick() for leadership transfer's choice.
  void mark_active(uint64_t tick) {
    active_ = true;
    last_answer_tick_ = tick;
  }
  uint64_t last_answer_tick() const { return last_answer_tick_; }

  // Check-quorum bookkeeping: whether it answered within the current election timeout.
  bool take_active() {
    bool a = active_;
    active_ = false;
    return a;
  }

  // The entry this leader appended for a catching-up follower to rejoin at (0: none yet).
  log_index rejoin_index() const { return rejoin_index_; }
  void set_rejoin_index(log_index i) { rejoin_index_ = i; }

private:
  progress_state state_ = progress_state::probe;
  log_index match_;
  log_index next_;
  bool probe_sent_ = false;
  std::deque<log_index> inflight_; // last index of each unacknowledged append, ascending
  bool responded_ = false;
  bool active_ = false;
  uint64_t last_answer_tick_ = 0;
  log_index rejoin_index_;
};

} // namespace capstan::raft
