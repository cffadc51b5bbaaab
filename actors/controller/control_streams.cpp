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

void control_streams::queue(std::vector<outgoing_message> messages) {
  for (auto& m : messages) {
    auto& s = streams_[m.to];
    if (s.needs_full_state) {
      if (!m.starts_full_state()) continue;
      s.needs_full_state = false;
    }
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
  sendable out{s.queue.front().message.what,
               s.queue.front().message.encode_as(s.queue.front().sequence)};
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
