#include "actors/replica/high_watermark.hpp"

#include <algorithm>
#include <cassert>

namespace capstan {

high_watermark_tracker::high_watermark_tracker(node_id leader, offset leader_leo, offset hw,
                                               const std::vector<node_id>& isr)
    : leader_(leader), hw_(hw) {
  assert(hw <= leader_leo);
  leo_.emplace(leader, leader_leo);
  set_isr(isr);
}

void high_watermark_tracker::set_isr(const std::vector<node_id>& isr) {
  std::map<node_id, offset> next;
  next.emplace(leader_, leo_.at(leader_));
  for (auto n : isr) {
    if (n == leader_) continue;
    auto it = leo_.find(n);
    next.emplace(n, it != leo_.end() ? it->second : hw_);
  }
  leo_ = std::move(next);
  recompute();
}

bool high_watermark_tracker::on_leader_append(offset leo) {
  auto& mine = leo_.at(leader_);
  mine = std::max(mine, leo);
  return recompute();
}

bool high_watermark_tracker::on_follower_leo(node_id follower, offset leo) {
  auto it = leo_.find(follower);
  if (it == leo_.end() || follower == leader_) return false;
  it->second = leo;
  return recompute();
}

bool high_watermark_tracker::recompute() {
  offset low = leo_.begin()->second;
  for (const auto& [n, leo] : leo_) low = std::min(low, leo);
  if (low <= hw_) return false;
  hw_ = low;
  return true;
}

} // namespace capstan
