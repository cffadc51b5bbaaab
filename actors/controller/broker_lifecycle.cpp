#include "actors/controller/broker_lifecycle.hpp"

#include <algorithm>
#include <cassert>

namespace capstan {

broker_lifecycle::broker_lifecycle(std::vector<node_id> voters, broker_lifecycle_timing timing)
    : voters_(std::move(voters)), timing_(timing) {
  assert(!voters_.empty());
  // A wait longer than the heartbeat period could outlast the session a new active controller
  // just gave this node (KAFKA-19294).
  timing_.max_backoff = std::min(timing_.max_backoff, timing_.heartbeat_interval);
  timing_.min_backoff = std::min(timing_.min_backoff, timing_.max_backoff);
  backoff_ = timing_.min_backoff;
  target_ = voters_.front();
}

std::chrono::milliseconds
broker_lifecycle::registered(const broker_registration_response_msg& answer,
                             std::chrono::steady_clock::time_point now) {
  if (answer.error == errc::duplicate_broker_registration) {
    if (!duplicate_since_) duplicate_since_ = now;
    if (now - *duplicate_since_ >= timing_.duplicate_patience)
      refusal_ = make_error(
          answer.error,
          answer.message + "; refused so for " +
              std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                                 now - *duplicate_since_)
                                 .count()) +
              " s, longer than the old process's session could last: another process with this "
              "node id is running");
  } else if (answer.error != errc::not_controller) {
    duplicate_since_.reset();
  }
  if (answer.error == errc::inconsistent_cluster_id)
    refusal_ = make_error(answer.error, answer.message);
  if (answer.error != errc::none) return refused(answer.error, answer.leader_hint);
  epoch_ = answer.broker_epoch;
  fenced_ = true;
  if (answer.leader_hint >= 0) target_ = node_id{answer.leader_hint};
  return succeeded(std::chrono::milliseconds{0});
}

std::chrono::milliseconds
broker_lifecycle::heartbeated(const broker_heartbeat_response_msg& answer) {
  if (answer.error != errc::none) return refused(answer.error, answer.leader_hint);
  fenced_ = answer.is_fenced;
  return succeeded(timing_.heartbeat_interval);
}

std::chrono::milliseconds broker_lifecycle::failed() {
  return next_voter();
}

bool broker_lifecycle::majority_gone(const std::set<node_id>& gone) const {
  const auto count = std::count_if(voters_.begin(), voters_.end(),
                                   [&](node_id v) { return gone.count(v) != 0; });
  return static_cast<size_t>(count) > voters_.size() / 2;
}

std::chrono::milliseconds broker_lifecycle::refused(errc code, int32_t leader_hint) {
  if (code == errc::not_controller) {
    if (leader_hint >= 0 && node_id{leader_hint} != target_) {
      target_ = node_id{leader_hint};
      return timing_.min_backoff;
    }
    return next_voter();
  }
  if (code == errc::stale_broker_epoch) {
    epoch_ = -1;
    fenced_ = true;
    return timing_.min_backoff;
  }
  // Refused for another reason (DUPLICATE_BROKER_REGISTRATION while an older process's session
  // lasts, INCONSISTENT_CLUSTER_ID, ...): ask again later, as KRaft does.
  auto wait = backoff_;
  backoff_ = std::min(backoff_ * 2, timing_.max_backoff);
  return wait;
}

std::chrono::milliseconds broker_lifecycle::next_voter() {
  voter_index_ = (voter_index_ + 1) % voters_.size();
  target_ = voters_[voter_index_];
  auto wait = backoff_;
  backoff_ = std::min(backoff_ * 2, timing_.max_backoff);
  return wait;
}

std::chrono::milliseconds broker_lifecycle::succeeded(std::chrono::milliseconds wait) {
  backoff_ = timing_.min_backoff;
  return wait;
}

} // namespace capstan
