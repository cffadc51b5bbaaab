#include "actors/controller/metadata/broker_sessions.hpp"

#include <algorithm>

namespace capstan::controller {

broker_sessions::broker_sessions(int64_t session_timeout_ms) : timeout_ms_(session_timeout_ms) {}

void broker_sessions::heartbeat(node_id node, int64_t now_ms) {
  auto [it, inserted] = last_heartbeat_.emplace(node, now_ms);
  if (!inserted) it->second = std::max(it->second, now_ms);
}

void broker_sessions::start_all(const std::vector<node_id>& nodes, int64_t now_ms) {
  for (auto n : nodes) heartbeat(n, now_ms);
}

void broker_sessions::remove(node_id node) { last_heartbeat_.erase(node); }

bool broker_sessions::alive(node_id node, int64_t now_ms) const {
  auto it = last_heartbeat_.find(node);
  return it != last_heartbeat_.end() && now_ms - it->second < timeout_ms_;
}

std::vector<node_id> broker_sessions::expired(int64_t now_ms) const {
  std::vector<node_id> out;
  for (const auto& [node, last] : last_heartbeat_)
    if (now_ms - last >= timeout_ms_) out.push_back(node);
  return out;
}

} // namespace capstan::controller
