#include "actors/controller/raft/raft_progress.hpp"

#include <algorithm>
#include <string>

#include "actors/controller/raft/raft_invariant.hpp"

namespace capstan::raft {

bool raft_progress::acknowledge(log_index index) {
  while (!inflight_.empty() && inflight_.front() <= index) inflight_.pop_front();
  if (index <= match_) return false;
  match_ = index;
  next_ = std::max(next_, match_ + 1);
  return true;
}

void raft_progress::become_probe(log_index next) {
  state_ = progress_state::probe;
  next_ = std::max(next, match_ + 1);
  probe_sent_ = false;
  inflight_.clear();
}

void raft_progress::become_replicate() {
  RAFT_INVARIANT(state_ == progress_state::probe,
                 "replicate from state " + std::to_string(static_cast<int>(state_)));
  state_ = progress_state::replicate;
  next_ = match_ + 1;
  probe_sent_ = false;
}

void raft_progress::become_snapshot(log_index snapshot_index) {
  state_ = progress_state::snapshot;
  next_ = snapshot_index + 1;
  probe_sent_ = true;
  inflight_.clear();
}

void raft_progress::sent_entries(log_index last) {
  RAFT_INVARIANT(state_ == progress_state::replicate && last >= next_,
                 "sent up to " + std::to_string(last.value()) + " with next " +
                     std::to_string(next_.value()));
  inflight_.push_back(last);
  next_ = last + 1;
}

} // namespace capstan::raft
