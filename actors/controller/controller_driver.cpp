// The controller's driver: see controller_driver.hpp.

#include "actors/controller/controller_driver.hpp"

#include <set>

#include <spdlog/spdlog.h>

namespace capstan::controller {

controller_driver::controller_driver(active_controller_options options, controller_io& io)
    : opts_(options), io_(io), core_(std::move(options)) {}

void controller_driver::answer(const queued_request& q, const controller_answer& a) {
  if (q.reply != 0) io_.reply(q.reply, a);
}

void controller_driver::refuse_all(errc code, const std::string& why) {
  auto queue = std::move(queue_);
  queue_.clear();
  for (auto& q : queue)
    answer(q, active_controller::refuse(q.request, make_error(code, why), leader_hint_));
}

void controller_driver::deactivate(const std::string& why) {
  if (!core_.active()) return;
  spdlog::info("controller {}: no longer active: {}", opts_.node.value(), why);
  core_.deactivate();
  ++generation_;
  busy_ = false;
  streams_.reset();
  refuse_all(errc::not_controller,
             "controller " + std::to_string(opts_.node.value()) + " is not active");
}

void controller_driver::answered(node_id to, uint64_t generation, bool applied) {
  if (generation != generation_) return;
  streams_.answered(to, applied);
  drain(to);
}

// Sends `to`'s next message, if one waits and none is out: a node gets them one at a time, in the
// order decided.
void controller_driver::drain(node_id to) {
  auto m = streams_.next(to);
  if (m) io_.send(to, generation_, std::move(*m));
}

void controller_driver::dispatch(std::vector<outgoing_message> messages) {
  if (messages.empty()) return;
  io_.learn_nodes(core_.image());
  std::set<node_id> touched;
  for (const auto& m : messages) touched.insert(m.to);
  streams_.queue(std::move(messages));
  for (auto n : touched) drain(n);
}

void controller_driver::settle(const queued_request& q, const prepared_request& p,
                               std::optional<metadata_image> image, const error& applied,
                               int64_t now_ms) {
  auto settled = core_.commit(p, std::move(image), applied, now_ms);
  answer(q, settled.answer);
  dispatch(std::move(settled.messages));
  busy_ = false;
}

// Decides queued requests one at a time, until one has records to propose.
void controller_driver::pump(int64_t now_ms) {
  while (!busy_ && !queue_.empty() && core_.active()) {
    auto q = std::move(queue_.front());
    queue_.pop_front();
    auto p = core_.prepare(q.request, now_ms);
    if (p.refused.code != errc::none || p.changes.records.empty()) {
      busy_ = true;
      settle(q, p, std::nullopt, error{}, now_ms);
      continue;
    }
    for (const auto& w : p.changes.warnings)
      spdlog::warn("controller {}: {}", opts_.node.value(), w);
    for (const auto& e : p.elections)
      if (e.outcome.code == errc::none)
        spdlog::info("controller {}: electing the preferred leader of {}-{}", opts_.node.value(),
                     e.partition.topic, e.partition.partition.value());
    busy_ = true;
    const uint64_t token = ++next_token_;
    auto& made = proposals_[token] = proposed{std::move(q), std::move(p), generation_};
    io_.propose(token, made.prepared.changes.records);
  }
}

void controller_driver::proposal_committed(uint64_t token, metadata_image image,
                                           const error& applied, int64_t now_ms) {
  auto it = proposals_.find(token);
  if (it == proposals_.end()) return;
  auto p = std::move(it->second);
  proposals_.erase(it);
  // Committed: the answer says what the change did, also if this controller stopped being
  // active meanwhile (the new active controller sends the nodes their state).
  if (p.generation != generation_) {
    answer(p.q, core_.committed_answer(p.prepared, image, applied));
    return;
  }
  settle(p.q, p.prepared, std::move(image), applied, now_ms);
  pump(now_ms);
}

void controller_driver::proposal_failed(uint64_t token, errc code, const std::string& why,
                                        std::optional<int32_t> leader_hint) {
  auto it = proposals_.find(token);
  if (it == proposals_.end()) return;
  auto p = std::move(it->second);
  proposals_.erase(it);
  if (leader_hint) leader_hint_ = *leader_hint;
  answer(p.q, active_controller::refuse(p.q.request, make_error(code, why), leader_hint_));
  if (p.generation == generation_) deactivate(why);
}

void controller_driver::request(result<controller_request> request, const controller_request& shape,
                                uint64_t reply, int64_t now_ms) {
  if (!request) {
    if (reply != 0) io_.reply(reply, active_controller::refuse(shape, request.err(), leader_hint_));
    return;
  }
  if (!core_.active()) {
    if (reply != 0)
      io_.reply(reply, active_controller::refuse(
                           *request,
                           make_error(errc::not_controller, "controller " +
                                                                std::to_string(opts_.node.value()) +
                                                                " is not active"),
                           leader_hint_));
    return;
  }
  if (auto hb = std::get_if<broker_heartbeat_msg>(&*request)) {
    core_.heartbeat_arrived(*hb, now_ms);
    // The node's link works: if a control message to it was lost, it gets its whole state now.
    // A fenced node gets it when its heartbeat unfences it.
    if (streams_.wants_full_state(hb->node) && core_.image().is_unfenced(hb->node)) {
      spdlog::info("controller {}: sends node {} its full state", opts_.node.value(),
                   hb->node.value());
      dispatch(core_.full_state(hb->node));
    }
  }
  queue_.push_back(queued_request{std::move(*request), reply});
  pump(now_ms);
}

template <class Request>
void controller_driver::queue_once(Request r) {
  if (!core_.active()) return;
  for (const auto& q : queue_)
    if (std::holds_alternative<Request>(q.request)) return;
  queue_.push_back(queued_request{std::move(r), 0});
}

void controller_driver::status(const quorum_status& s, int64_t now_ms) {
  leader_hint_ = s.leader ? s.leader->value() : -1;
  const auto term = static_cast<int32_t>(s.term.value());
  // A member handing its leadership over refuses proposals: not active meanwhile.
  const bool leads = s.role == raft::role::leader && !s.handing_over;
  if (core_.active() && (!leads || term != core_.epoch()))
    deactivate(std::string(s.handing_over ? "the quorum member hands over term "
                                          : "the quorum member no longer leads term ") +
               std::to_string(core_.epoch()));
  if (leads && !core_.active() && !activating_ && s.applied_index == s.last_index) {
    activating_ = true;
    activating_term_ = term;
    io_.read_image();
    return;
  }
  if (!core_.active()) return;
  queue_expiries(now_ms);
  if (core_.recovery_due()) queue_once(leader_recovery{});
  pump(now_ms);
}

void controller_driver::connection_lost(node_id node, int64_t now_ms) {
  if (!core_.active()) return;
  if (core_.image().is_unfenced(node))
    spdlog::info("controller {}: the connection to node {} closed", opts_.node.value(),
                 node.value());
  core_.connection_lost(node);
  queue_expiries(now_ms);
  pump(now_ms);
}

void controller_driver::queue_expiries(int64_t now_ms) {
  auto expired = core_.expired_sessions(now_ms);
  for (auto e = expired.rbegin(); e != expired.rend(); ++e) {
    spdlog::info("controller {}: the session of node {} expired", opts_.node.value(),
                 e->node.value());
    queue_.push_front(queued_request{*e, 0});
  }
}

void controller_driver::activate(metadata_image image, int64_t now_ms) {
  activating_ = false;
  const int32_t term = activating_term_;
  ++generation_;
  streams_.reset();
  busy_ = false;
  auto messages = core_.activate(std::move(image), term, now_ms);
  spdlog::info("controller {}: active in term {}, {} registered nodes", opts_.node.value(), term,
               core_.image().brokers().size());
  dispatch(std::move(messages));
}

void controller_driver::activation_failed() {
  activating_ = false;
}

void controller_driver::rebalance(int64_t now_ms) {
  queue_once(leader_rebalance{});
  pump(now_ms);
}

} // namespace capstan::controller
