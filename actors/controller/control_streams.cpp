#include "actors/controller/control_streams.hpp"

namespace capstan::controller {

void control_streams::reset() {
  // Numbers go on rising: a controller active again within its epoch (a handover given up, a
  // proposal timed out) must not reuse a number a node applied, or the node would take the new
  // stream for duplicates and never converge.
  for (auto& [node, s] : streams_) {
    stream fresh;
    fresh.next_sequence = s.next_sequence;
    s = std::move(fresh);
  }
}

void control_streams::drop(stream& s) {
  s.queue.clear();
  s.needs_full_state = true;
}

// A LeaderAndIsr or UpdateMetadata delta joins the last queued message of its kind, if it may
// go before every message queued after that one: each commit sends a node both, and the 20,000
// ISR changes of a restart with 10,000 partitions would otherwise queue past max_queued, one
// round trip each, and the node would get its whole state again instead.
bool control_streams::joined(stream& s, outgoing_message& m) {
  for (auto it = s.queue.rbegin(); it != s.queue.rend(); ++it) {
    if (it->message.may_follow(m)) continue;
    if (!it->message.absorb(m)) return false;
    // The joined delta now goes before these: its addresses replace theirs.
    for (auto passed = s.queue.rbegin(); passed != it; ++passed) passed->message.passed_by(it->message);
    return true;
  }
  return false;
}

void control_streams::queue(std::vector<outgoing_message> messages) {
  for (auto& m : messages) {
    auto& s = streams_[m.to];
    if (s.needs_full_state) {
      if (!m.starts_full_state()) continue;
      s.needs_full_state = false;
    }
    if (joined(s, m)) continue;
    if (s.queue.size() >= max_queued_) {
      drop(s);
      continue;
    }
    s.queue.push_back(numbered{s.next_sequence++, std::move(m)});
  }
}

std::optional<control_streams::sendable> control_streams::next(node_id node) {
  auto it = streams_.find(node);
  if (it == streams_.end() || it->second.out || it->second.queue.empty()) return std::nullopt;
  auto& s = it->second;
  s.out = true;
  auto& front = s.queue.front();
  front.message.keep_last_states();
  sendable out{front.message.what, front.message.encode_as(front.sequence),
               front.message.partitions()};
  s.queue.pop_front();
  return out;
}

void control_streams::answered(node_id node, bool applied) {
  auto it = streams_.find(node);
  if (it == streams_.end() || !it->second.out) return;
  auto& s = it->second;
  s.out = false;
  if (!applied) drop(s);
}

bool control_streams::wants_full_state(node_id node) const {
  auto it = streams_.find(node);
  return it != streams_.end() && it->second.needs_full_state && !it->second.out &&
         it->second.queue.empty();
}

size_t control_streams::queued(node_id node) const {
  auto it = streams_.find(node);
  return it == streams_.end() ? 0 : it->second.queue.size();
}

} // namespace capstan::controller
