#include "actors/replica/leader_state.hpp"

#include <algorithm>
#include <cassert>

namespace capstan {

namespace {

bool contains(const std::vector<node_id>& v, node_id n) {
  return std::find(v.begin(), v.end(), n) != v.end();
}

} // namespace

leader_state::leader_state(leader_config config, offset leo, offset hw, offset epoch_start,
                           timestamp_ms now)
    : config_(std::move(config)), leo_(leo), hw_(hw), epoch_start_(epoch_start) {
  assert(hw <= leo);
  if (!contains(config_.isr, config_.leader)) config_.isr.push_back(config_.leader);
  for (auto r : config_.replicas) {
    if (r == config_.leader) continue;
    follower_state f;
    f.last_caught_up_ms = contains(config_.isr, r) ? now : 0;
    followers_.emplace(r, f);
  }
  recompute();
}

bool leader_state::on_leader_append(offset leo) {
  leo_ = std::max(leo_, leo);
  return recompute();
}

bool leader_state::on_follower_fetch(node_id follower, offset fetch_offset, timestamp_ms now,
                                     const incarnation_bytes& incarnation) {
  auto it = followers_.find(follower);
  if (it == followers_.end()) return false;
  auto& f = it->second;
  // Another process of the node: what the old one fetched says nothing about this one's log.
  if (incarnation != f.incarnation) f.last_fetch_leader_log_end = offset{-1};
  f.incarnation = incarnation;
  if (fetch_offset >= leo_)
    f.last_caught_up_ms = std::max(f.last_caught_up_ms, now);
  else if (f.last_fetch_leader_log_end.value() >= 0 && fetch_offset >= f.last_fetch_leader_log_end)
    f.last_caught_up_ms = std::max(f.last_caught_up_ms, f.last_fetch_ms);
  f.log_end = fetch_offset;
  f.last_fetch_leader_log_end = leo_;
  f.last_fetch_ms = now;
  return recompute();
}

bool leader_state::caught_up(const follower_state& f, timestamp_ms now) const {
  return f.log_end == leo_ || now - f.last_caught_up_ms <= config_.replica_lag_time_max_ms;
}

std::optional<isr_proposal> leader_state::propose_shrink(timestamp_ms now) {
  if (pending_) return std::nullopt;
  std::vector<node_id> keep;
  for (auto n : config_.isr) {
    auto it = followers_.find(n);
    if (n == config_.leader || it == followers_.end() || caught_up(it->second, now))
      keep.push_back(n);
  }
  if (keep.size() == config_.isr.size()) return std::nullopt;
  pending_ = proposal(std::move(keep));
  return pending_;
}

std::optional<isr_proposal> leader_state::propose_expand() {
  if (pending_) return std::nullopt;
  for (const auto& [n, f] : followers_) {
    if (contains(config_.isr, n) || f.log_end.value() < 0) continue;
    if (f.log_end >= hw_ && f.log_end >= epoch_start_) {
      auto isr = config_.isr;
      isr.push_back(n);
      pending_ = proposal(std::move(isr));
      return pending_;
    }
  }
  return std::nullopt;
}

bool leader_state::on_isr_committed(std::vector<node_id> isr, int32_t partition_epoch) {
  // The state this leader has already (a duplicate, or a full state resent): an expansion in
  // flight must keep holding the HW, or the joining follower could enter the ISR below it.
  if (partition_epoch <= config_.partition_epoch) return false;
  if (!contains(isr, config_.leader)) isr.push_back(config_.leader);
  config_.isr = std::move(isr);
  config_.partition_epoch = partition_epoch;
  pending_.reset();
  return recompute();
}

void leader_state::set_replicas(std::vector<node_id> replicas) {
  std::erase_if(followers_, [&](const auto& f) { return !contains(replicas, f.first); });
  for (auto r : replicas)
    if (r != config_.leader) followers_.try_emplace(r);
  config_.replicas = std::move(replicas);
}

void leader_state::on_proposal_failed() { pending_.reset(); }

bool leader_state::set_min_insync_replicas(int32_t min_insync_replicas) {
  config_.min_insync_replicas = min_insync_replicas;
  return recompute();
}

bool leader_state::enough_replicas() const {
  return static_cast<int64_t>(config_.isr.size()) >= config_.min_insync_replicas;
}

bool leader_state::in_isr(node_id n) const { return contains(config_.isr, n); }

const follower_state* leader_state::follower(node_id n) const {
  auto it = followers_.find(n);
  return it == followers_.end() ? nullptr : &it->second;
}

isr_proposal leader_state::proposal(std::vector<node_id> isr) const {
  isr_proposal out{std::move(isr), config_.partition_epoch};
  bool named = false;
  for (auto n : out.isr) {
    const auto* f = follower(n);
    out.incarnations.push_back(f != nullptr ? f->incarnation : incarnation_bytes{});
    named = named || out.incarnations.back() != incarnation_bytes{};
  }
  if (!named) out.incarnations.clear();
  return out;
}

std::vector<node_id> leader_state::maximal_isr() const {
  auto out = config_.isr;
  if (pending_)
    for (auto n : pending_->isr)
      if (!contains(out, n)) out.push_back(n);
  return out;
}

bool leader_state::recompute() {
  const auto needed = std::min<int64_t>(config_.min_insync_replicas,
                                        static_cast<int64_t>(std::max<size_t>(config_.replicas.size(), 1)));
  if (static_cast<int64_t>(config_.isr.size()) < needed) return false;
  offset low = leo_;
  for (auto n : maximal_isr()) {
    if (n == config_.leader) continue;
    auto it = followers_.find(n);
    // A member this leader has not heard from yet (or one outside the assignment) pins the HW.
    if (it == followers_.end() || it->second.log_end.value() < 0) return false;
    low = std::min(low, it->second.log_end);
  }
  if (low <= hw_) return false;
  hw_ = low;
  return true;
}

} // namespace capstan
