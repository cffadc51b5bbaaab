#include "actors/controller/metadata/broker_sessions.hpp"

#include <algorithm>

namespace capstan::controller {

broker_sessions::broker_sessions(int64_t session_timeout_ms) : timeout_ms_(session_timeout_ms) {}

void broker_sessions::heartbeat(node_id node, int64_t now_ms) {
  if (lost(node)) return;
  auto [it, inserted] = sessions_.emplace(node, session{now_ms, true});
  if (inserted) return;
  it->second.last_heartbeat_ms = std::max(it->second.last_heartbeat_ms, now_ms);
  it->second.heard = true;
}

void broker_sessions::start_all(const std::vector<node_id>& nodes, int64_t now_ms) {
  for (auto n : nodes) {
    auto [it, inserted] = sessions_.emplace(n, session{now_ms, false});
    if (!inserted) it->second.last_heartbeat_ms = std::max(it->second.last_heartbeat_ms, now_ms);
  }
}

void broker_sessions::connection_lost(node_id node) { lost_.insert(node); }

void broker_sessions::heard_again(node_id node) { lost_.erase(node); }

void broker_sessions::remove(node_id node) { sessions_.erase(node); }

bool broker_sessions::alive(node_id node, int64_t now_ms) const {
  auto it = sessions_.find(node);
  return it != sessions_.end() && !lost(node) && now_ms - it->second.last_heartbeat_ms < timeout_ms_;
}

bool broker_sessions::heard_from(node_id node) const {
  auto it = sessions_.find(node);
  return it != sessions_.end() && it->second.heard;
}

std::vector<node_id> broker_sessions::expired(int64_t now_ms) const {
  std::vector<node_id> out;
  for (const auto& [node, s] : sessions_)
    if (lost(node) || now_ms - s.last_heartbeat_ms >= timeout_ms_) out.push_back(node);
  return out;
}

} // namespace capstan::controller
