#include "actors/controller/active_controller.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include "actors/controller/metadata/partition_decisions.hpp"
#include "actors/controller/metadata/producer_id_decisions.hpp"
#include "actors/controller/metadata/topic_decisions.hpp"

namespace capstan::controller {

namespace {

template <class... F>
struct overloaded : F... {
  using F::operator()...;
};
template <class... F>
overloaded(F...) -> overloaded<F...>;

void take(prepared_request& p, result<decision> d) {
  if (d)
    p.changes = std::move(*d);
  else
    p.refused = d.err();
}

// Addresses each message to its node's registration in `image`: a later process of the node
// refuses what was decided for this one.
void address(std::vector<outgoing_message>& messages, const metadata_image& image) {
  for (auto& m : messages)
    if (const auto* b = image.broker(m.to))
      std::visit([&](auto& x) { x.target = b->incarnation; }, m.message);
}

} // namespace

active_controller::active_controller(active_controller_options options)
    : opts_(std::move(options)), rng_(opts_.seed), sessions_(opts_.session_timeout_ms) {}

std::vector<outgoing_message> active_controller::activate(metadata_image committed, int32_t term,
                                                          int64_t now_ms) {
  image_ = std::move(committed);
  epoch_ = term;
  active_ = true;
  sessions_ = broker_sessions(opts_.session_timeout_ms);
  reports_.clear();
  std::vector<node_id> registered;
  for (const auto& [id, b] : image_.brokers()) registered.push_back(id);
  // Only unfenced nodes get a session now (KRaft's BrokerHeartbeatManager tracks fenced ones
  // without one): a node whose controlled shutdown fenced it, here or under the previous
  // controller, is gone, and its next process must not be refused while a fresh session lasts.
  // A fenced node that still runs gets its session from its next heartbeat.
  sessions_.start_all(image_.unfenced_brokers(), now_ms);
  std::vector<outgoing_message> out;
  for (auto id : registered) {
    auto full = full_state(id);
    out.insert(out.end(), std::make_move_iterator(full.begin()),
               std::make_move_iterator(full.end()));
  }
  return out;
}

std::vector<outgoing_message> active_controller::full_state(node_id node) const {
  std::vector<outgoing_message> out;
  out.emplace_back(node, update_metadata(image_, stamp()));
  auto hosted = full_control_messages(image_, node);
  if (!hosted.leader_and_isr.empty()) out.emplace_back(node, leader_and_isr(hosted, stamp()));
  address(out, image_);
  return out;
}

void active_controller::deactivate() {
  active_ = false;
  sessions_ = broker_sessions(opts_.session_timeout_ms);
  reports_.clear();
}

void active_controller::heartbeat_arrived(const broker_heartbeat_msg& heartbeat, int64_t now_ms) {
  const broker_epoch epoch{heartbeat.broker_epoch};
  if (!check_broker_epoch(image_, heartbeat.node, epoch)) return;
  // It arrived after any loss of the node's connection seen so far: the node is there.
  sessions_.heard_again(heartbeat.node);
  sessions_.heartbeat(heartbeat.node, now_ms);
  for (auto it = reports_.begin(); it != reports_.end();) {
    it->second.erase(heartbeat.node);
    it = it->second.empty() ? reports_.erase(it) : std::next(it);
  }
  for (const auto& log : heartbeat.leaderless)
    reports_[{log.topic, log.partition}][heartbeat.node] = replica_log_report{epoch, log};
}

bool active_controller::recovery_due() const {
  const heard_from heard = [this](node_id n) { return sessions_.heard_from(n); };
  return !reports_.empty() &&
         !recoverable_partitions(image_, reports_, opts_.decisions, heard).empty();
}

prepared_request active_controller::prepare(controller_request request, int64_t now_ms) {
  prepared_request p{std::move(request), {}, {}, {}, {}};
  const heard_from heard = [this](node_id n) { return sessions_.heard_from(n); };
  std::visit(
      overloaded{
          [&](const broker_registration_request& r) {
            const bool alive = image_.broker(r.node) != nullptr && sessions_.alive(r.node, now_ms);
            take(p, register_broker(image_, r, alive, opts_.decisions, heard));
          },
          [&](const broker_heartbeat_msg& h) {
            const broker_epoch epoch{h.broker_epoch};
            if (auto s = check_broker_epoch(image_, h.node, epoch); !s) {
              p.refused = s.err();
              return;
            }
            // Arrived before the node's connection closed, decided after: the dead process's
            // last word, which must neither keep nor unfence it.
            if (sessions_.lost(h.node)) return;
            sessions_.heartbeat(h.node, now_ms);
            if (h.want_shut_down) {
              // KRaft's controlled shutdown, in one step: the node's leaderships and ISR
              // memberships move now rather than when its session would run out.
              take(p, fence_broker(image_, h.node, epoch, opts_.decisions, heard));
              return;
            }
            if (!h.want_fence && !image_.is_unfenced(h.node))
              take(p, unfence_broker(image_, h.node, epoch, opts_.decisions, heard));
            else if (!h.want_fence)
              // A partition may wait for a leader among nodes not heard from then (a whole-cluster
              // restart): this one is heard from now.
              take(p, elect_leaderless(image_, h.node, epoch, opts_.decisions, heard));
            if (h.offline.empty() || p.refused.code != errc::none) return;
            // The offline replicas are decided on the image the unfencing or election (if any)
            // leaves, as it may have elected the node for a partition it cannot serve.
            const metadata_image* base = &image_;
            std::optional<metadata_image> unfenced;
            if (!p.changes.records.empty()) {
              unfenced.emplace(image_);
              if (auto s = unfenced->apply(p.changes.records); !s) {
                p.refused = s.err();
                return;
              }
              base = &*unfenced;
            }
            auto offline =
                take_replicas_offline(*base, h.node, epoch, h.offline, opts_.decisions, heard);
            if (!offline) {
              p.refused = offline.err();
              return;
            }
            for (auto& r : offline->records) p.changes.records.push_back(std::move(r));
            for (auto& w : offline->warnings) p.changes.warnings.push_back(std::move(w));
          },
          [&](const topic_spec& spec) {
            take(p, create_topic(image_, spec, opts_.decisions, rng_));
          },
          [&](const delete_topic_msg& d) { take(p, delete_topic(image_, d.name)); },
          [&](const import_topics_msg& m) { take(p, import_topics(image_, m)); },
          [&](const unregister_broker_msg& u) {
            take(p, unregister_broker(image_, u.node, sessions_.alive(u.node, now_ms)));
          },
          [&](const alter_configs_msg& a) {
            take(p, alter_configs(image_, a.name, a.configs, a.deleted));
          },
          [&](const create_partitions_msg& c) {
            take(p, create_partitions(image_, c.name, c.total, opts_.decisions));
          },
          [&](const elect_leaders_msg& e) {
            std::optional<std::vector<partition_ref>> wanted;
            if (!e.partitions.empty()) {
              wanted.emplace();
              for (const auto& t : e.partitions)
                wanted->push_back(partition_ref{t.topic, partition_id{t.partition}});
            }
            auto d = elect_preferred_leaders(image_, wanted);
            p.changes = std::move(d.changes);
            p.elections = std::move(d.results);
          },
          [&](const leader_recovery&) {
            p.changes = recover_leaderless(image_, reports_, opts_.decisions, heard);
          },
          [&](const reassign_partitions_msg& r) {
            std::vector<reassignment_target> targets;
            for (const auto& item : r.partitions) {
              reassignment_target t{partition_ref{item.topic, partition_id{item.partition}}, {}};
              if (!item.cancel) t.replicas.emplace(item.replicas.begin(), item.replicas.end());
              targets.push_back(std::move(t));
            }
            auto d = alter_reassignments(image_, targets);
            p.changes = std::move(d.changes);
            p.elections = std::move(d.results);
          },
          [&](const leader_rebalance&) {
            auto wanted = imbalanced_partitions(image_, opts_.imbalance_percentage);
            if (wanted.empty()) return;
            auto d = elect_preferred_leaders(image_, wanted);
            p.changes = std::move(d.changes);
            p.elections = std::move(d.results);
          },
          [&](const alter_partition_msg& a) {
            auto d = alter_partition(image_, a);
            p.changes = std::move(d.changes);
            p.outcomes = std::move(d.outcomes);
          },
          [&](const allocate_producer_ids_msg&) { take(p, allocate_producer_ids(image_)); },
          [&](const session_expiry& e) {
            // A heartbeat that arrived after the expiry was reported keeps the node.
            if (sessions_.alive(e.node, now_ms)) return;
            take(p, fence_broker(image_, e.node, e.epoch, opts_.decisions, heard));
          },
      },
      p.request);
  return p;
}

settled_request active_controller::commit(const prepared_request& prepared,
                                          std::optional<metadata_image> committed,
                                          const error& applied, int64_t now_ms) {
  settled_request out;
  std::optional<node_id> registered;
  if (committed) {
    if (auto r = std::get_if<broker_registration_request>(&prepared.request);
        r != nullptr && applied.code == errc::none && prepared.refused.code == errc::none) {
      // The new registration's session starts now (a new process, on a new connection); the node
      // needs everything it hosts.
      sessions_.heard_again(r->node);
      sessions_.heartbeat(r->node, now_ms);
      registered = r->node;
    }
    // A node unfenced by its heartbeat may have missed the control messages sent while it was
    // fenced (a cut-off node, docs/operations.md, drops them): it needs everything it hosts too.
    if (std::holds_alternative<broker_heartbeat_msg>(prepared.request) &&
        applied.code == errc::none && prepared.refused.code == errc::none)
      for (const auto& rec : prepared.changes.records)
        if (auto u = std::get_if<unfence_broker_record>(&rec)) registered = u->node;
    out.messages =
        messages(plan_control_messages(image_, *committed), image_, *committed, registered);
    image_ = std::move(*committed);
  }
  // A node whose controlled shutdown is done has no session: the process is going, and its next
  // incarnation may register at once.
  if (auto h = std::get_if<broker_heartbeat_msg>(&prepared.request);
      h != nullptr && h->want_shut_down && applied.code == errc::none &&
      prepared.refused.code == errc::none && !image_.is_unfenced(h->node))
    sessions_.remove(h->node);
  if (auto u = std::get_if<unregister_broker_msg>(&prepared.request);
      u != nullptr && applied.code == errc::none && prepared.refused.code == errc::none)
    sessions_.remove(u->node);
  out.answer = committed_answer(prepared, image_, applied);
  return out;
}

controller_answer active_controller::committed_answer(const prepared_request& prepared,
                                                      const metadata_image& committed,
                                                      const error& applied) const {
  if (applied.code != errc::none) return refuse(prepared.request, applied, opts_.node.value());
  if (prepared.refused.code != errc::none)
    return refuse(prepared.request, prepared.refused, opts_.node.value());
  return answer(prepared, committed);
}

controller_answer active_controller::refuse(const controller_request& request, const error& why,
                                            int32_t leader_hint) {
  return std::visit(
      overloaded{
          [&](const broker_registration_request&) -> controller_answer {
            return broker_registration_response_msg{why.code, why.message, -1, leader_hint};
          },
          [&](const broker_heartbeat_msg&) -> controller_answer {
            return broker_heartbeat_response_msg{why.code, why.message, true, leader_hint, false};
          },
          [&](const topic_spec&) -> controller_answer {
            return topic_response_msg{why.code, why.message, {}, leader_hint};
          },
          [&](const delete_topic_msg&) -> controller_answer {
            return topic_response_msg{why.code, why.message, {}, leader_hint};
          },
          [&](const import_topics_msg&) -> controller_answer {
            return topic_response_msg{why.code, why.message, {}, leader_hint};
          },
          [&](const unregister_broker_msg&) -> controller_answer {
            return topic_response_msg{why.code, why.message, {}, leader_hint};
          },
          [&](const alter_configs_msg&) -> controller_answer {
            return topic_response_msg{why.code, why.message, {}, leader_hint};
          },
          [&](const create_partitions_msg&) -> controller_answer {
            return topic_response_msg{why.code, why.message, {}, leader_hint};
          },
          [&](const elect_leaders_msg&) -> controller_answer {
            return elect_leaders_response_msg{why.code, why.message, leader_hint, {}};
          },
          [&](const reassign_partitions_msg&) -> controller_answer {
            return elect_leaders_response_msg{why.code, why.message, leader_hint, {}};
          },
          [&](const leader_rebalance&) -> controller_answer { return std::monostate{}; },
          [&](const leader_recovery&) -> controller_answer { return std::monostate{}; },
          [&](const alter_partition_msg&) -> controller_answer {
            return alter_partition_response_msg{why.code, why.message, {}};
          },
          [&](const allocate_producer_ids_msg&) -> controller_answer {
            return allocate_producer_ids_response_msg{why.code, why.message, 0, 0, leader_hint};
          },
          [&](const session_expiry&) -> controller_answer { return std::monostate{}; },
      },
      request);
}

controller_answer active_controller::answer(const prepared_request& prepared,
                                            const metadata_image& committed) const {
  const int32_t hint = opts_.node.value();
  auto per_partition = [&] {
    elect_leaders_response_msg out{errc::none, {}, hint, {}};
    for (const auto& r : prepared.elections)
      out.results.push_back(election_outcome{r.partition.topic, r.partition.partition.value(),
                                             r.outcome.code, r.outcome.message});
    return out;
  };
  return std::visit(
      overloaded{
          [&](const broker_registration_request& r) -> controller_answer {
            auto b = committed.broker(r.node);
            return broker_registration_response_msg{
                errc::none, {}, b ? b->epoch.value() : -1, hint};
          },
          [&](const broker_heartbeat_msg& h) -> controller_answer {
            const bool fenced = !committed.is_unfenced(h.node);
            return broker_heartbeat_response_msg{
                errc::none, {}, fenced, hint, h.want_shut_down && fenced};
          },
          [&](const topic_spec& spec) -> controller_answer {
            auto t = committed.topic_by_name(spec.name);
            if (t == nullptr)
              return topic_response_msg{
                  errc::unknown_topic_or_partition, spec.name + " is gone again", {}, hint};
            return topic_response_msg{errc::none, {}, t->id, hint};
          },
          [&](const delete_topic_msg&) -> controller_answer {
            topic_response_msg out{errc::none, {}, {}, hint};
            for (const auto& rec : prepared.changes.records)
              if (auto r = std::get_if<remove_topic_record>(&rec)) out.id = r->topic;
            return out;
          },
          [&](const unregister_broker_msg&) -> controller_answer {
            return topic_response_msg{errc::none, {}, {}, hint};
          },
          [&](const import_topics_msg&) -> controller_answer {
            return topic_response_msg{errc::none, {}, {}, hint};
          },
          [&](const alter_configs_msg& a) -> controller_answer {
            auto t = committed.topic_by_name(a.name);
            if (t == nullptr)
              return topic_response_msg{
                  errc::unknown_topic_or_partition, a.name + " is gone again", {}, hint};
            return topic_response_msg{errc::none, {}, t->id, hint};
          },
          [&](const create_partitions_msg& c) -> controller_answer {
            auto t = committed.topic_by_name(c.name);
            if (t == nullptr)
              return topic_response_msg{
                  errc::unknown_topic_or_partition, c.name + " is gone again", {}, hint};
            return topic_response_msg{errc::none, {}, t->id, hint};
          },
          [&](const elect_leaders_msg&) -> controller_answer { return per_partition(); },
          [&](const reassign_partitions_msg&) -> controller_answer { return per_partition(); },
          [&](const leader_rebalance&) -> controller_answer { return std::monostate{}; },
          [&](const leader_recovery&) -> controller_answer { return std::monostate{}; },
          [&](const alter_partition_msg& a) -> controller_answer {
            return answer_alter_partition(committed, a, prepared.outcomes);
          },
          [&](const allocate_producer_ids_msg&) -> controller_answer {
            // The block is the one its record committed, whatever the image moved on to since.
            allocate_producer_ids_response_msg out{errc::none, {}, 0, 0, hint};
            for (const auto& rec : prepared.changes.records)
              if (auto r = std::get_if<producer_ids_record>(&rec)) {
                out.first_id = r->first_id;
                out.size = r->size;
              }
            return out;
          },
          [&](const session_expiry&) -> controller_answer { return std::monostate{}; },
      },
      prepared.request);
}

std::vector<session_expiry> active_controller::expired_sessions(int64_t now_ms) {
  std::vector<session_expiry> out;
  for (auto n : sessions_.expired(now_ms)) {
    sessions_.remove(n);
    if (auto b = image_.broker(n); b != nullptr && !b->fenced)
      out.push_back(session_expiry{n, b->epoch});
  }
  return out;
}

std::vector<outgoing_message> active_controller::messages(const control_plan& plan,
                                                          const metadata_image& before,
                                                          const metadata_image& after,
                                                          std::optional<node_id> full_for) const {
  std::vector<outgoing_message> out;
  // One delta for every node: its size follows the change, not the image.
  std::optional<update_metadata_msg> delta;
  if (plan.update_metadata) delta = update_metadata_delta(before, after, stamp());
  for (const auto& [id, b] : after.brokers()) {
    const bool full = full_for == id;
    if (full)
      out.emplace_back(id, update_metadata(after, stamp()));
    else if (delta)
      out.emplace_back(id, *delta);
    node_control control;
    if (auto it = plan.nodes.find(id); it != plan.nodes.end()) control = it->second;
    if (full) {
      auto all = full_control_messages(after, id);
      control.leader_and_isr = std::move(all.leader_and_isr);
      control.leaders = std::move(all.leaders);
    }
    if (!control.leader_and_isr.empty()) out.emplace_back(id, leader_and_isr(control, stamp()));
    if (!control.stop_and_delete.empty()) out.emplace_back(id, stop_replica(control, stamp()));
  }
  address(out, after);
  return out;
}

outgoing_message::outgoing_message(node_id to, update_metadata_msg m)
    : to(to), what(kind::update_metadata), message(std::move(m)) {}
outgoing_message::outgoing_message(node_id to, leader_and_isr_msg m)
    : to(to), what(kind::leader_and_isr), message(std::move(m)) {}
outgoing_message::outgoing_message(node_id to, stop_replica_msg m)
    : to(to), what(kind::stop_replica), message(std::move(m)) {}

bool outgoing_message::starts_full_state() const {
  auto u = std::get_if<update_metadata_msg>(&message);
  return u != nullptr && u->full;
}

size_t outgoing_message::partitions() const {
  // A full UpdateMetadata names every partition of the cluster but costs the node little.
  if (std::holds_alternative<update_metadata_msg>(message)) return 0;
  return std::visit([](const auto& m) { return m.partitions.size(); }, message);
}

namespace {

bool same_sender_and_target(const auto& a, const auto& b) {
  return a.target == b.target && a.controller_id == b.controller_id &&
         a.controller_epoch == b.controller_epoch;
}

bool absorb_states(leader_and_isr_msg& mine, leader_and_isr_msg& later) {
  if (!same_sender_and_target(mine, later)) return false;
  std::move(later.partitions.begin(), later.partitions.end(), std::back_inserter(mine.partitions));
  for (auto& e : later.leaders) {
    auto same = std::find_if(mine.leaders.begin(), mine.leaders.end(),
                             [&](const node_endpoint_msg& m) { return m.node == e.node; });
    if (same == mine.leaders.end())
      mine.leaders.push_back(std::move(e));
    else
      *same = std::move(e);
  }
  return true;
}

// Two deltas as one: `later`'s removals drop what `mine` says of those topics, a topic `later`
// names (perhaps created again under its name) replaces `mine`'s, and the node list is the
// latest.
bool absorb_delta(update_metadata_msg& mine, update_metadata_msg& later) {
  if (mine.full || later.full || !same_sender_and_target(mine, later)) return false;
  std::set<topic_id> removed(later.removed_topics.begin(), later.removed_topics.end());
  std::map<std::string, topic_id> renamed;
  for (const auto& t : later.topics) renamed[t.name] = t.id;
  auto superseded = [&](const std::string& name, const topic_id& id) {
    if (removed.count(id) != 0) return true;
    auto it = renamed.find(name);
    return it != renamed.end() && it->second != id;
  };
  // Most deltas (ISR changes) name no topic: nothing of `mine` to drop, and no pass over it.
  if (!removed.empty() || !renamed.empty()) {
    std::erase_if(mine.topics, [&](const topic_config_msg& t) {
      return superseded(t.name, t.id) || renamed.count(t.name) != 0;
    });
    std::erase_if(mine.partitions,
                  [&](const partition_state_msg& p) { return superseded(p.tp.first, p.id); });
  }
  mine.removed_topics.insert(mine.removed_topics.end(), later.removed_topics.begin(),
                             later.removed_topics.end());
  std::move(later.topics.begin(), later.topics.end(), std::back_inserter(mine.topics));
  std::move(later.partitions.begin(), later.partitions.end(), std::back_inserter(mine.partitions));
  mine.nodes = std::move(later.nodes);
  mine.cluster_id = std::move(later.cluster_id);
  return true;
}

} // namespace

bool outgoing_message::absorb(outgoing_message& later) {
  if (to != later.to || what != later.what) return false;
  if (auto mine = std::get_if<leader_and_isr_msg>(&message))
    return absorb_states(*mine, std::get<leader_and_isr_msg>(later.message));
  if (auto mine = std::get_if<update_metadata_msg>(&message))
    return absorb_delta(*mine, std::get<update_metadata_msg>(later.message));
  return false;
}

bool outgoing_message::may_follow(const outgoing_message& later) const {
  auto states = std::get_if<leader_and_isr_msg>(&message);
  auto delta = std::get_if<update_metadata_msg>(&later.message);
  if (states == nullptr || delta == nullptr || delta->full) return false;
  if (delta->topics.empty() && delta->removed_topics.empty()) return true;
  // Not a delta that creates, changes or removes a topic this LeaderAndIsr names: the node
  // would open the topic's replicas without its configs, or with the next ones.
  std::set<std::string> names;
  std::set<topic_id> ids;
  for (const auto& p : states->partitions) {
    names.insert(p.tp.first);
    ids.insert(p.id);
  }
  for (const auto& t : delta->topics)
    if (names.count(t.name) != 0) return false;
  for (const auto& id : delta->removed_topics)
    if (ids.count(id) != 0) return false;
  return true;
}

void outgoing_message::passed_by(const outgoing_message& later) {
  auto states = std::get_if<leader_and_isr_msg>(&message);
  auto delta = std::get_if<update_metadata_msg>(&later.message);
  if (states == nullptr || delta == nullptr) return;
  // The node learns addresses from both, the last it applies winning: the delta's, now applied
  // first, are the newer.
  for (auto& e : states->leaders)
    for (const auto& n : delta->nodes)
      if (n.node == e.node) e = n;
}

void outgoing_message::keep_last_states() {
  auto last_of_each = [](std::vector<partition_state_msg>& states) {
    std::set<topic_partition> seen;
    std::vector<partition_state_msg> kept;
    for (auto p = states.rbegin(); p != states.rend(); ++p)
      if (seen.insert(p->tp).second) kept.push_back(std::move(*p));
    std::reverse(kept.begin(), kept.end());
    states = std::move(kept);
  };
  if (auto l = std::get_if<leader_and_isr_msg>(&message)) last_of_each(l->partitions);
  if (auto u = std::get_if<update_metadata_msg>(&message)) last_of_each(u->partitions);
}

capnp_frame outgoing_message::encode_as(int64_t sequence) const {
  return std::visit(
      [sequence](auto m) {
        m.sequence = sequence;
        return encode(m);
      },
      message);
}

int64_t offline_partitions(const metadata_image& image) {
  int64_t out = 0;
  for (const auto& [id, topic] : image.topics())
    for (const auto& p : topic.partitions)
      if (p.leader == no_leader || !image.is_unfenced(p.leader)) ++out;
  return out;
}

voter_state describe_voter(const quorum_status& member, const active_controller& controller) {
  voter_state out;
  out.node = member.node.value();
  out.role = std::string(raft::to_string(member.role));
  out.term = static_cast<int64_t>(member.term.value());
  out.commit_index = static_cast<int64_t>(member.commit_index.value());
  out.leader = member.leader ? member.leader->value() : -1;
  out.active = controller.active();
  for (auto v : member.voters) out.voters.push_back(v.value());
  if (!out.active) return out;
  for (const auto& [id, b] : controller.image().brokers())
    out.nodes.push_back(registered_node{id.value(), b.fenced, b.epoch.value(), b.incarnation});
  return out;
}

} // namespace capstan::controller
