#include "tests/unit/controller/raft/raft_invariant_checker.hpp"

#include <algorithm>
#include <sstream>

namespace capstan::raft::test {

namespace {

std::string n_(node_id n) {
  return "node " + std::to_string(n.value());
}
std::string i_(log_index i) {
  return std::to_string(i.value());
}
std::string t_(raft_term t) {
  return std::to_string(t.value());
}

log_index last_of(const node_view& v) {
  return v.snap.index + v.entries.size();
}

const entry* entry_at(const node_view& v, log_index i) {
  if (i <= v.snap.index || i > last_of(v)) return nullptr;
  return &v.entries[i - (v.snap.index + 1)];
}

} // namespace

std::optional<std::string> check_log_matching(const node_view& a, const node_view& b) {
  const log_index lo = std::max(a.snap.index, b.snap.index) + 1;
  const log_index hi = std::min(last_of(a), last_of(b));
  if (hi < lo) return std::nullopt;
  log_index agree{0};
  for (log_index i = hi; i >= lo; i = i - 1) {
    if (entry_at(a, i)->term == entry_at(b, i)->term) {
      agree = i;
      break;
    }
  }
  for (log_index j = lo; j <= agree; ++j) {
    const entry& x = *entry_at(a, j);
    const entry& y = *entry_at(b, j);
    if (x != y)
      return "log matching: " + n_(a.id) + " and " + n_(b.id) + " both hold term " +
             t_(entry_at(a, agree)->term) + " at index " + i_(agree) + " but differ at index " +
             i_(j) + " (terms " + t_(x.term) + " and " + t_(y.term) + ")";
  }
  return std::nullopt;
}

void raft_invariant_checker::on_sent(node_id n, const message_body& m) {
  if (std::holds_alternative<pre_vote>(m)) return;
  if (const auto* r = std::get_if<pre_vote_response>(&m); r != nullptr && r->granted) return;
  auto& track = nodes_[n];
  track.max_sent = std::max(track.max_sent, term_of(m));
}

std::optional<std::string> raft_invariant_checker::on_start(node_id n, raft_term t) {
  auto& track = nodes_[n];
  if (t < track.max_sent)
    return n_(n) + " restarted in term " + t_(t) + " although it had sent messages of term " +
           t_(track.max_sent) + " (term not durable before sending)";
  track.term = t;
  track.commit = log_index{};
  track.applied = log_index{};
  return std::nullopt;
}

void raft_invariant_checker::on_lost(node_id n) {
  nodes_[n] = node_track{};
}

std::optional<std::string> raft_invariant_checker::record_applied(node_id n, log_index index,
                                                                  const bytes& data) {
  auto [it, fresh] = applied_.emplace(index, data);
  if (!fresh && it->second != data)
    return "state machine safety: " + n_(n) + " applied different data at index " + i_(index) +
           " than another node";
  if (auto c = committed_.find(index); c != committed_.end() && c->second.data != data)
    return "state machine safety: " + n_(n) + " applied at index " + i_(index) +
           " data that differs from the committed entry";
  return std::nullopt;
}

std::optional<std::string> raft_invariant_checker::on_apply(node_id n, log_index index,
                                                            const bytes& data) {
  auto& track = nodes_[n];
  if (index != track.applied + 1)
    return n_(n) + " applied index " + i_(index) + " after " + i_(track.applied);
  track.applied = index;
  return record_applied(n, index, data);
}

std::optional<std::string>
raft_invariant_checker::on_snapshot_loaded(node_id n, std::span<const bytes> applied) {
  auto& track = nodes_[n];
  const log_index loaded{applied.size()};
  if (loaded < track.applied)
    return n_(n) + " loaded a snapshot at " + i_(loaded) + " behind its applied index " +
           i_(track.applied);
  for (size_t k = 0; k < applied.size(); ++k)
    if (auto v = record_applied(n, log_index{k + 1}, applied[k])) return v;
  track.applied = loaded;
  return std::nullopt;
}

std::optional<std::string>
raft_invariant_checker::check_leader_has(const node_view& leader, log_index i,
                                         const committed_entry& c) const {
  if (i <= leader.snap.index) return std::nullopt;
  const entry* e = entry_at(leader, i);
  if (e != nullptr && e->term == c.term && e->data == c.data) return std::nullopt;
  return "leader completeness: " + n_(leader.id) + ", leader of term " + t_(leader.term) +
         ", lacks the entry (term " + t_(c.term) + ") at index " + i_(i) +
         " that was committed in term " + t_(c.observed_in);
}

std::optional<std::string> raft_invariant_checker::check_node(const node_view& v,
                                                              std::span<const node_view> up) {
  auto& track = nodes_[v.id];
  if (v.term < track.term)
    return n_(v.id) + "'s term went from " + t_(track.term) + " down to " + t_(v.term);
  track.term = v.term;
  if (v.commit < track.commit)
    return n_(v.id) + "'s commit index went from " + i_(track.commit) + " down to " + i_(v.commit);

  if (v.role == raft::role::leader) {
    auto [it, fresh] = leaders_.emplace(v.term, std::pair{v.id, v.directory});
    if (!fresh && it->second.first != v.id)
      return "election safety: " + n_(it->second.first) + " and " + n_(v.id) + " both led term " +
             t_(v.term);
    if (!fresh && it->second.second != v.directory)
      return "election safety: two incarnations of " + n_(v.id) + " (before and after it lost " +
             "its disk) both led term " + t_(v.term);
    if (fresh)
      for (const auto& [i, c] : committed_)
        if (c.observed_in < v.term)
          if (auto bad = check_leader_has(v, i, c)) return bad;
  }

  for (log_index i = track.commit + 1; i <= v.commit; ++i) {
    const entry* e = entry_at(v, i);
    if (e == nullptr) continue; // inside the snapshot
    auto [it, fresh] = committed_.emplace(i, committed_entry{e->term, e->data, v.term});
    if (!fresh) {
      if (it->second.term != e->term || it->second.data != e->data)
        return "state machine safety: " + n_(v.id) + " committed (term " + t_(e->term) +
               ") at index " + i_(i) + " where (term " + t_(it->second.term) +
               ") was committed before";
      continue;
    }
    if (auto a = applied_.find(i); a != applied_.end() && a->second != e->data)
      return "state machine safety: " + n_(v.id) + " committed at index " + i_(i) +
             " data that differs from what was applied there";
    for (const auto& l : up)
      if (l.role == raft::role::leader && l.term > v.term)
        if (auto bad = check_leader_has(l, i, it->second)) return bad;
  }
  track.commit = v.commit;
  return std::nullopt;
}

std::optional<std::string> raft_invariant_checker::check(std::span<const node_view> up,
                                                         std::span<const node_id> changed) {
  for (const auto& v : up)
    if (auto bad = check_node(v, up)) return bad;
  for (node_id c : changed) {
    auto cv = std::find_if(up.begin(), up.end(), [&](const node_view& v) { return v.id == c; });
    if (cv == up.end()) continue;
    for (const auto& o : up)
      if (o.id != c)
        if (auto bad = check_log_matching(*cv, o)) return bad;
  }
  return std::nullopt;
}

} // namespace capstan::raft::test
