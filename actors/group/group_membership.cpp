// One group's classic-protocol membership: see group_membership.hpp. The rules follow Kafka's
// GroupCoordinator (handleJoinGroup, handleSyncGroup, handleHeartbeat, handleLeaveGroup,
// handleCommitOffsets) and GroupMetadata.

#include "actors/group/group_membership.hpp"

#include <algorithm>
#include <utility>

#include "runtime/group/consumer_protocol.hpp"

namespace capstan {

namespace {

void append(group_membership::outcome& to, group_membership::outcome from) {
  to.joins.insert(to.joins.end(), std::make_move_iterator(from.joins.begin()),
                  std::make_move_iterator(from.joins.end()));
  to.syncs.insert(to.syncs.end(), std::make_move_iterator(from.syncs.begin()),
                  std::make_move_iterator(from.syncs.end()));
}

} // namespace

const char* to_string(group_state s) {
  switch (s) {
    case group_state::empty: return "Empty";
    case group_state::preparing_rebalance: return "PreparingRebalance";
    case group_state::completing_rebalance: return "CompletingRebalance";
    case group_state::stable: return "Stable";
    case group_state::dead: return "Dead";
  }
  return "Unknown";
}

group_membership::group_membership(std::string group_id, group_limits limits,
                                   std::function<std::string(const std::string&)> new_member_id)
  : group_id_(std::move(group_id)), limits_(limits), new_member_id_(std::move(new_member_id)) {}

join_group_response group_membership::reject_join(errc code, std::string message,
                                                  std::string member_id) const {
  join_group_response r;
  r.error = code;
  r.message = "group " + group_id_ + ": " + std::move(message);
  r.member_id = std::move(member_id);
  return r;
}

// Whether the protocols a member offers fit the group: the same protocol type, and at least one
// protocol every other member offers too (Kafka's INCONSISTENT_GROUP_PROTOCOL otherwise).
bool group_membership::protocols_supported(const join_group_request& req) const {
  if (req.protocol_type.empty() || req.protocols.empty()) return false;
  bool others = false;
  for (const auto& [id, m] : members_) others = others || id != req.member_id;
  if (!others) return true;
  if (req.protocol_type != protocol_type_) return false;
  return std::any_of(req.protocols.begin(), req.protocols.end(), [&](const group_protocol& p) {
    return std::all_of(members_.begin(), members_.end(), [&](const auto& entry) {
      const auto& ps = entry.second.protocols;
      return entry.first == req.member_id ||
             std::any_of(ps.begin(), ps.end(), [&](const group_protocol& q) { return q.name == p.name; });
    });
  });
}

// Kafka's GroupMetadata.selectProtocol: of the protocols every member supports, each member
// votes for the first in its own order of preference; the most votes win (the earliest
// candidate in the leader's order on a tie).
std::string group_membership::select_protocol() const {
  std::vector<std::string> candidates;
  const auto& first = members_.count(leader_) ? members_.at(leader_) : members_.begin()->second;
  for (const auto& p : first.protocols) {
    const bool everyone = std::all_of(members_.begin(), members_.end(), [&](const auto& entry) {
      const auto& ps = entry.second.protocols;
      return std::any_of(ps.begin(), ps.end(), [&](const group_protocol& q) { return q.name == p.name; });
    });
    if (everyone) candidates.push_back(p.name);
  }
  std::map<std::string, int> votes;
  for (const auto& [id, m] : members_) {
    for (const auto& p : m.protocols) {
      if (std::find(candidates.begin(), candidates.end(), p.name) == candidates.end()) continue;
      ++votes[p.name];
      break;
    }
  }
  std::string best;
  int most = -1;
  for (const auto& c : candidates) {
    if (votes[c] > most) {
      most = votes[c];
      best = c;
    }
  }
  return best;
}

int32_t group_membership::rebalance_timeout_ms() const {
  int32_t longest = 0;
  for (const auto& [id, m] : members_) longest = std::max(longest, m.rebalance_timeout_ms);
  return longest;
}

join_group_response group_membership::join_answer(const member& m) const {
  join_group_response r;
  r.generation = generation_;
  r.protocol_name = protocol_name_;
  r.leader = leader_;
  r.member_id = m.id;
  if (m.id != leader_) return r;
  for (const auto& [id, other] : members_) {
    bytes metadata;
    for (const auto& p : other.protocols)
      if (p.name == protocol_name_) metadata = p.metadata;
    r.members.push_back(group_member_metadata{id, other.instance_id, std::move(metadata)});
  }
  return r;
}

group_membership::outcome group_membership::join(reply_id to, const join_group_request& req,
                                                 timestamp_ms now) {
  outcome out;
  auto reject = [&](errc code, std::string message) {
    out.joins.push_back({to, reject_join(code, std::move(message), req.member_id)});
    return out;
  };
  if (state_ == group_state::dead)
    return reject(errc::coordinator_not_available, "is being unloaded from this coordinator");
  if (req.session_timeout_ms < limits_.min_session_timeout_ms ||
      req.session_timeout_ms > limits_.max_session_timeout_ms)
    return reject(errc::invalid_session_timeout,
                  "session timeout " + std::to_string(req.session_timeout_ms) + " ms is outside [" +
                    std::to_string(limits_.min_session_timeout_ms) + ", " +
                    std::to_string(limits_.max_session_timeout_ms) + "]");
  if (req.rebalance_timeout_ms <= 0)
    return reject(errc::invalid_request, "the rebalance timeout must be positive");
  if (!protocols_supported(req))
    return reject(errc::inconsistent_group_protocol,
                  "protocol type '" + req.protocol_type +
                    "' or its protocols do not match the group's (" + protocol_type_ + ")");
  if (!req.group_instance_id.empty()) {
    auto s = static_members_.find(req.group_instance_id);
    if (s != static_members_.end() && !req.member_id.empty() && req.member_id != s->second)
      return reject(errc::fenced_instance_id, "instance " + req.group_instance_id +
                                                 " joined again as another member");
  }
  if (req.member_id.empty()) return join_unknown(to, req, now);
  if (auto it = members_.find(req.member_id); it != members_.end())
    return join_known(to, it->second, req, now);
  if (auto p = pending_.find(req.member_id); p != pending_.end()) {
    if (static_cast<int32_t>(members_.size()) >= limits_.max_size) {
      pending_.erase(p);
      return reject(errc::group_max_size_reached,
                    "has reached group.max.size (" + std::to_string(limits_.max_size) + ")");
    }
    pending_.erase(p);
    add_member(out, to, req.member_id, req, now);
    append(out, maybe_complete_join(now));
    return out;
  }
  return reject(errc::unknown_member_id, "has no member " + req.member_id);
}

// Whether a member's protocols ask the same as before: the same names in the same order, and for
// the consumer protocol the same subscriptions (what the member owns may differ: a restarted
// member owns nothing yet); for any other protocol type, the same bytes.
bool group_membership::same_protocols(const std::vector<group_protocol>& before,
                                      const std::vector<group_protocol>& now) const {
  if (protocol_type_ != consumer_protocol_type) return before == now;
  return std::equal(before.begin(), before.end(), now.begin(), now.end(), [](const auto& x, const auto& y) {
    return x.name == y.name && same_subscription(x.metadata, y.metadata);
  });
}

group_membership::outcome group_membership::join_unknown(reply_id to, const join_group_request& req,
                                                         timestamp_ms now) {
  outcome out;
  const auto id = new_member_id_(req.client_id);
  if (!req.group_instance_id.empty()) {
    if (auto s = static_members_.find(req.group_instance_id); s != static_members_.end()) {
      // A static member back (a restart): the new id replaces the old one, which is fenced.
      auto node = members_.extract(s->second);
      auto& old = node.mapped();
      if (old.awaiting_join)
        out.joins.push_back({*old.awaiting_join,
                             reject_join(errc::fenced_instance_id, "a newer join of instance " +
                                                                     req.group_instance_id + " replaced it",
                                         old.id)});
      if (old.awaiting_sync)
        out.syncs.push_back({*old.awaiting_sync, {errc::fenced_instance_id, "replaced by a newer join", {}}});
      old.awaiting_join.reset();
      old.awaiting_sync.reset();
      if (leader_ == old.id) leader_ = id;
      const bool same = same_protocols(old.protocols, req.protocols);
      old.id = id;
      node.key() = id;
      auto& m = members_.insert(std::move(node)).position->second;
      s->second = id;
      if (state_ == group_state::stable && same) {
        // KIP-345: nothing changed for the group; the member picks up where it was.
        m.protocols = req.protocols;
        m.client_id = req.client_id;
        m.session_timeout_ms = req.session_timeout_ms;
        m.rebalance_timeout_ms = req.rebalance_timeout_ms;
        m.session_deadline = now + m.session_timeout_ms;
        out.joins.push_back({to, join_answer(m)});
        return out;
      }
      append(out, join_known(to, m, req, now));
      return out;
    }
    if (static_cast<int32_t>(members_.size()) >= limits_.max_size) {
      out.joins.push_back({to, reject_join(errc::group_max_size_reached,
                                           "has reached group.max.size (" +
                                             std::to_string(limits_.max_size) + ")")});
      return out;
    }
    // A static member joins at once: its instance id already names it (no MEMBER_ID_REQUIRED).
    add_member(out, to, id, req, now);
    append(out, maybe_complete_join(now));
    return out;
  }
  if (static_cast<int32_t>(members_.size()) >= limits_.max_size) {
    out.joins.push_back({to, reject_join(errc::group_max_size_reached,
                                         "has reached group.max.size (" +
                                           std::to_string(limits_.max_size) + ")")});
    return out;
  }
  // KIP-394: the member learns its id first and joins with it, so a join that times out on the
  // client does not leave an unknown member behind.
  pending_[id] = now + req.session_timeout_ms;
  out.joins.push_back({to, reject_join(errc::member_id_required, "join again with the member id given", id)});
  return out;
}

group_membership::outcome group_membership::join_known(reply_id to, member& m,
                                                       const join_group_request& req, timestamp_ms now) {
  outcome out;
  switch (state_) {
    case group_state::preparing_rebalance:
      if (m.awaiting_join)
        out.joins.push_back({*m.awaiting_join, reject_join(errc::rebalance_in_progress,
                                                           "a newer join of the member replaced this one", m.id)});
      update_member(m, to, req, now);
      break;
    case group_state::completing_rebalance:
      if (m.protocols == req.protocols) {
        // The member missed the answer to its join: the generation it joined is still the one.
        m.session_deadline = now + m.session_timeout_ms;
        out.joins.push_back({to, join_answer(m)});
        return out;
      }
      update_member(m, to, req, now);
      prepare_rebalance(out, now, m.id);
      break;
    case group_state::stable:
      if (m.id != leader_ && m.protocols == req.protocols) {
        m.session_deadline = now + m.session_timeout_ms;
        out.joins.push_back({to, join_answer(m)});
        return out;
      }
      // The leader rejoins when it wants a new assignment (its subscription changed).
      update_member(m, to, req, now);
      prepare_rebalance(out, now, m.id);
      break;
    case group_state::empty:
    case group_state::dead:
      out.joins.push_back({to, reject_join(errc::unknown_member_id, "has no member " + m.id, m.id)});
      return out;
  }
  append(out, maybe_complete_join(now));
  return out;
}

void group_membership::update_member(member& m, reply_id to, const join_group_request& req,
                                     timestamp_ms now) {
  m.client_id = req.client_id;
  m.session_timeout_ms = req.session_timeout_ms;
  m.rebalance_timeout_ms = req.rebalance_timeout_ms;
  m.protocols = req.protocols;
  m.awaiting_join = to;
  m.joined = true;
  m.session_deadline = now + m.session_timeout_ms;
  if (state_ == group_state::preparing_rebalance)
    join_deadline_ = std::max(join_deadline_, now + m.rebalance_timeout_ms);
}

void group_membership::add_member(outcome& out, reply_id to, const std::string& id,
                                  const join_group_request& req, timestamp_ms now) {
  if (members_.empty()) protocol_type_ = req.protocol_type;
  auto& m = members_[id];
  m.id = id;
  m.instance_id = req.group_instance_id;
  if (!req.group_instance_id.empty()) static_members_[req.group_instance_id] = id;
  if (leader_.empty()) leader_ = id;
  update_member(m, to, req, now);
  if (state_ != group_state::preparing_rebalance) {
    prepare_rebalance(out, now, id);
    return;
  }
  // An empty group's first rebalance waits for more members; each one that comes extends the
  // wait, never past the join phase's end.
  if (initial_delay_end_)
    initial_delay_end_ = std::min(now + limits_.initial_rebalance_delay_ms, join_deadline_);
}

void group_membership::prepare_rebalance(outcome& out, timestamp_ms now, const std::string& joiner) {
  if (state_ == group_state::completing_rebalance) {
    // The assignment of the generation that never became stable is void.
    for (auto& [id, m] : members_) {
      m.assignment.clear();
      if (m.awaiting_sync) {
        out.syncs.push_back({*m.awaiting_sync, {errc::rebalance_in_progress,
                                                "group " + group_id_ + " is rebalancing again", {}}});
        m.awaiting_sync.reset();
      }
    }
  }
  const bool from_empty = state_ == group_state::empty;
  for (auto& [id, m] : members_) m.joined = id == joiner;
  state_ = group_state::preparing_rebalance;
  join_deadline_ = now + rebalance_timeout_ms();
  if (from_empty && limits_.initial_rebalance_delay_ms > 0)
    initial_delay_end_ = std::min(now + limits_.initial_rebalance_delay_ms, join_deadline_);
}

group_membership::outcome group_membership::maybe_complete_join(timestamp_ms now) {
  outcome out;
  if (state_ != group_state::preparing_rebalance) return out;
  if (initial_delay_end_ && now < *initial_delay_end_) return out;
  const bool all_joined = std::all_of(members_.begin(), members_.end(),
                                      [](const auto& entry) { return entry.second.joined; });
  if (!all_joined || !pending_.empty()) return out;
  return complete_join(now);
}

group_membership::outcome group_membership::complete_join(timestamp_ms now) {
  outcome out;
  // Members that did not rejoin within the rebalance timeout leave the group.
  for (auto it = members_.begin(); it != members_.end();) {
    if (it->second.joined) {
      ++it;
      continue;
    }
    if (!it->second.instance_id.empty()) static_members_.erase(it->second.instance_id);
    it = members_.erase(it);
  }
  initial_delay_end_.reset();
  ++generation_;
  if (members_.empty()) {
    state_ = group_state::empty;
    protocol_type_.clear();
    protocol_name_.clear();
    leader_.clear();
    return out;
  }
  if (!members_.count(leader_)) leader_ = members_.begin()->first;
  protocol_name_ = select_protocol();
  state_ = group_state::completing_rebalance;
  for (auto& [id, m] : members_) {
    m.session_deadline = now + m.session_timeout_ms;
    if (!m.awaiting_join) continue;
    out.joins.push_back({*m.awaiting_join, join_answer(m)});
    m.awaiting_join.reset();
  }
  return out;
}

errc group_membership::check_member(const group_member_ref& ref, const member** out) const {
  if (!ref.group_instance_id.empty()) {
    auto s = static_members_.find(ref.group_instance_id);
    if (s != static_members_.end() && s->second != ref.member_id) return errc::fenced_instance_id;
  }
  auto it = members_.find(ref.member_id);
  if (it == members_.end()) return errc::unknown_member_id;
  *out = &it->second;
  return errc::none;
}

group_membership::outcome group_membership::sync(reply_id to, const sync_group_request& req,
                                                 timestamp_ms now) {
  outcome out;
  auto answer = [&](errc code, std::string message) {
    out.syncs.push_back({to, {code, "group " + group_id_ + ": " + std::move(message), {}}});
    return out;
  };
  if (state_ == group_state::dead)
    return answer(errc::coordinator_not_available, "is being unloaded from this coordinator");
  const member* found = nullptr;
  if (auto e = check_member({req.member_id, req.group_instance_id, req.generation}, &found); e != errc::none)
    return answer(e, "no member " + req.member_id + " of instance '" + req.group_instance_id + "'");
  if (req.generation != generation_)
    return answer(errc::illegal_generation, "generation " + std::to_string(req.generation) +
                                              " is not the current " + std::to_string(generation_));
  auto& m = members_.at(found->id);
  switch (state_) {
    case group_state::preparing_rebalance:
      return answer(errc::rebalance_in_progress, "is rebalancing: join again");
    case group_state::completing_rebalance:
      if (m.awaiting_sync)
        out.syncs.push_back({*m.awaiting_sync, {errc::rebalance_in_progress, "a newer sync replaced it", {}}});
      m.awaiting_sync = to;
      m.session_deadline = now + m.session_timeout_ms;
      if (m.id == leader_) complete_sync(out, req.assignments);
      return out;
    case group_state::stable:
      m.session_deadline = now + m.session_timeout_ms;
      out.syncs.push_back({to, {errc::none, {}, m.assignment}});
      return out;
    case group_state::empty:
    case group_state::dead:
      break;
  }
  return answer(errc::unknown_member_id, "has no members");
}

void group_membership::complete_sync(outcome& out, const std::vector<member_assignment>& assignments) {
  for (auto& [id, m] : members_) m.assignment.clear();
  for (const auto& a : assignments)
    if (auto it = members_.find(a.member_id); it != members_.end()) it->second.assignment = a.assignment;
  state_ = group_state::stable;
  for (auto& [id, m] : members_) {
    if (!m.awaiting_sync) continue;
    out.syncs.push_back({*m.awaiting_sync, {errc::none, {}, m.assignment}});
    m.awaiting_sync.reset();
  }
}

errc group_membership::heartbeat(const group_member_ref& ref, timestamp_ms now) {
  if (state_ == group_state::dead) return errc::coordinator_not_available;
  const member* found = nullptr;
  if (auto e = check_member(ref, &found); e != errc::none) return e;
  if (ref.generation != generation_) return errc::illegal_generation;
  auto& m = members_.at(found->id);
  m.session_deadline = now + m.session_timeout_ms;
  if (state_ == group_state::preparing_rebalance) return errc::rebalance_in_progress;
  return errc::none;
}

std::pair<errc, group_membership::outcome> group_membership::leave(const group_member_ref& ref,
                                                                   timestamp_ms now) {
  if (state_ == group_state::dead) return {errc::coordinator_not_available, {}};
  const member* found = nullptr;
  if (auto e = check_member(ref, &found); e != errc::none) return {e, {}};
  return {errc::none, remove_member(found->id, now)};
}

group_membership::outcome group_membership::remove_member(std::string id, timestamp_ms now) {
  outcome out;
  auto it = members_.find(id);
  if (it == members_.end()) return out;
  auto& m = it->second;
  if (m.awaiting_join)
    out.joins.push_back({*m.awaiting_join, reject_join(errc::unknown_member_id, "the member left", id)});
  if (m.awaiting_sync)
    out.syncs.push_back({*m.awaiting_sync, {errc::unknown_member_id, "the member left", {}}});
  if (!m.instance_id.empty()) static_members_.erase(m.instance_id);
  members_.erase(it);
  if (leader_ == id) leader_ = members_.empty() ? std::string{} : members_.begin()->first;
  if (state_ == group_state::stable || state_ == group_state::completing_rebalance)
    prepare_rebalance(out, now, {});
  append(out, maybe_complete_join(now));
  return out;
}

group_membership::outcome group_membership::tick(timestamp_ms now) {
  outcome out;
  if (state_ == group_state::dead) return out;
  std::erase_if(pending_, [&](const auto& p) { return p.second <= now; });
  std::vector<std::string> expired;
  for (const auto& [id, m] : members_)
    if (!m.awaiting_join && !m.awaiting_sync && m.session_deadline <= now) expired.push_back(id);
  for (const auto& id : expired) append(out, remove_member(id, now));
  if (state_ != group_state::preparing_rebalance) return out;
  if (now >= join_deadline_) {
    // The join phase is over: whoever did not rejoin in time leaves the group.
    initial_delay_end_.reset();
    pending_.clear();
    append(out, complete_join(now));
    return out;
  }
  if (initial_delay_end_ && now >= *initial_delay_end_) initial_delay_end_.reset();
  append(out, maybe_complete_join(now));
  return out;
}

std::optional<timestamp_ms> group_membership::next_deadline() const {
  std::optional<timestamp_ms> next;
  auto consider = [&](timestamp_ms t) { next = next ? std::min(*next, t) : t; };
  if (state_ == group_state::dead) return next;
  for (const auto& [id, deadline] : pending_) consider(deadline);
  for (const auto& [id, m] : members_)
    if (!m.awaiting_join && !m.awaiting_sync) consider(m.session_deadline);
  if (state_ == group_state::preparing_rebalance) {
    consider(join_deadline_);
    if (initial_delay_end_) consider(*initial_delay_end_);
  }
  return next;
}

errc group_membership::check_commit(const group_member_ref& ref) const {
  if (state_ == group_state::dead) return errc::coordinator_not_available;
  if (ref.member_id.empty() && ref.generation < 0)
    return members_.empty() ? errc::none : errc::unknown_member_id;
  const member* found = nullptr;
  if (auto e = check_member(ref, &found); e != errc::none) return e;
  if (ref.generation != generation_) return errc::illegal_generation;
  if (state_ == group_state::completing_rebalance) return errc::rebalance_in_progress;
  return errc::none;
}

group_membership::outcome group_membership::unload() {
  outcome out;
  for (auto& [id, m] : members_) {
    if (m.awaiting_join)
      out.joins.push_back({*m.awaiting_join, reject_join(errc::not_coordinator,
                                                         "this node no longer coordinates it", id)});
    if (m.awaiting_sync)
      out.syncs.push_back({*m.awaiting_sync, {errc::not_coordinator, "this node no longer coordinates it", {}}});
    m.awaiting_join.reset();
    m.awaiting_sync.reset();
  }
  state_ = group_state::dead;
  return out;
}

group_metadata_value group_membership::snapshot(timestamp_ms wall_now) const {
  group_metadata_value v;
  v.protocol_type = protocol_type_;
  v.generation = generation_;
  v.protocol_name = protocol_name_;
  v.leader = leader_;
  v.state_timestamp = wall_now;
  for (const auto& [id, m] : members_) {
    group_metadata_member r{id, m.instance_id, m.client_id, {}, m.rebalance_timeout_ms,
                            m.session_timeout_ms, {}, m.assignment};
    for (const auto& p : m.protocols)
      if (p.name == protocol_name_) r.subscription = p.metadata;
    v.members.push_back(std::move(r));
  }
  return v;
}

void group_membership::restore(const group_metadata_value& record, timestamp_ms now) {
  generation_ = record.generation;
  members_.clear();
  static_members_.clear();
  pending_.clear();
  for (const auto& r : record.members) {
    member m;
    m.id = r.member_id;
    m.instance_id = r.group_instance_id;
    m.client_id = r.client_id;
    m.session_timeout_ms = r.session_timeout_ms;
    m.rebalance_timeout_ms = r.rebalance_timeout_ms;
    m.protocols = {group_protocol{record.protocol_name, r.subscription}};
    m.assignment = r.assignment;
    m.session_deadline = now + r.session_timeout_ms;
    m.joined = true;
    if (!m.instance_id.empty()) static_members_[m.instance_id] = m.id;
    members_.emplace(m.id, std::move(m));
  }
  if (members_.empty()) {
    state_ = group_state::empty;
    protocol_type_.clear();
    protocol_name_.clear();
    leader_.clear();
    return;
  }
  state_ = group_state::stable;
  protocol_type_ = record.protocol_type;
  protocol_name_ = record.protocol_name;
  leader_ = members_.count(record.leader) ? record.leader : members_.begin()->first;
}

} // namespace capstan
