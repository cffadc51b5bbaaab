#include "actors/controller/raft/raft_core.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "actors/controller/raft/raft_invariant.hpp"
#include "actors/controller/raft/voter_set.hpp"

namespace capstan::raft {

namespace {

std::string num(uint64_t v) {
  return std::to_string(v);
}

} // namespace

raft_core::raft_core(raft_config config, durable_state state)
    : config_(std::move(config)), bootstrap_(bootstrap_voters(config_.voters)), rng_(config_.seed),
      log_(std::move(state.snap), std::move(state.entries)), hard_(state.hard),
      persisted_hard_(state.hard) {
  RAFT_INVARIANT(!bootstrap_.empty(), "no bootstrap voter");
  RAFT_INVARIANT(std::adjacent_find(bootstrap_.begin(), bootstrap_.end(),
                                    [](const voter& a, const voter& b) { return a.id == b.id; }) ==
                     bootstrap_.end(),
                 "a voter appears twice");
  RAFT_INVARIANT(config_.election_timeout_ticks > 0 && config_.heartbeat_ticks > 0,
                 "ticks must be positive");
  RAFT_INVARIANT(hard_.term >= log_.last_term(), "hard state term " + num(hard_.term.value()) +
                                                     " below last log term " +
                                                     num(log_.last_term().value()));
  commit_ = log_.snapshot_index();
  applied_ = log_.snapshot_index();
  become_follower(hard_.term, std::nullopt);
  maybe_bootstrap();
}

const voter_set& raft_core::voters() const {
  const auto& logged = log_.voters();
  return logged.empty() ? bootstrap_ : logged;
}

bool raft_core::is_voter(node_id n) const {
  return contains(voters(), n);
}

std::optional<node_id> raft_core::changing_voter() const {
  if (!change_) return std::nullopt;
  return change_->v.id;
}

// A node that heard from a live leader within an election timeout (or is that leader) refuses
// pre-votes and ignores votes of higher terms, so a node that was partitioned away cannot
// depose a healthy leader when it comes back (thesis §4.2.3 and §9.6).
bool raft_core::in_lease() const {
  return leader_.has_value() &&
         (role_ == raft::role::leader || election_elapsed_ < config_.election_timeout_ticks);
}

void raft_core::reset_election_timer() {
  election_elapsed_ = 0;
  randomized_timeout_ = config_.election_timeout_ticks +
                        static_cast<uint32_t>(rng_() % config_.election_timeout_ticks);
}

void raft_core::send(node_id to, message_body body) {
  const auto known = peer_ids_.find(to);
  outbox_.push_back(message{config_.id, to, std::move(body), config_.directory,
                            known == peer_ids_.end() ? directory_id{} : known->second.directory,
                            hard_.catching_up});
}

void raft_core::note_sender(const message& m) {
  auto& known = peer_ids_[m.from];
  if (known.directory == m.from_directory) {
    // One incarnation only ever goes from catching up to whole: a catching-up message of one
    // known whole is an old one.
    if (!m.catching_up) known.catching_up = false;
    return;
  }
  const bool replaced = known.directory != directory_id{};
  known = peer_identity{m.from_directory, m.catching_up};
  // What this leader knew of the follower's log was the other incarnation's: its
  // acknowledgements must not count for this one.
  if (auto pr = peers_.find(m.from); replaced && pr != peers_.end())
    pr->second = raft_progress(log_.last_index() + 1);
}

bool raft_core::counts(node_id peer) const {
  const auto known = peer_ids_.find(peer);
  return known == peer_ids_.end() || !known->second.catching_up;
}

bool raft_core::fresh() const {
  return hard_.term == raft_term{} && log_.last_index() == log_index{};
}

// --- inputs ---------------------------------------------------------------------------------

void raft_core::tick() {
  RAFT_INVARIANT(!awaiting_advance_, "tick before advance()");
  ++ticks_;
  if (role_ == raft::role::leader)
    tick_leader();
  else
    tick_election();
}

void raft_core::tick_election() {
  // A node that may not campaign still lets its leader's lease run out, or it would refuse the
  // voters' pre-votes for ever.
  if (!may_campaign()) {
    if (election_elapsed_ < config_.election_timeout_ticks) ++election_elapsed_;
    return;
  }
  if (hard_.catching_up) {
    tick_catching_up();
    return;
  }
  // A quorum of one has nobody to wait for: it elects itself at its first tick.
  if (++election_elapsed_ >= randomized_timeout_ || voters().size() == 1) start_pre_vote();
}

// A catching-up node never starts an election. When it would (no leader heard from for a
// randomized election timeout) it asks the voters where they stand instead: a leader then learns
// its directory id and brings it up to date, and a quorum that is all new finds out that it is.
void raft_core::tick_catching_up() {
  if (++election_elapsed_ < randomized_timeout_) return;
  reset_election_timer();
  for (const auto& v : voters())
    if (v.id != config_.id) send(v.id, catch_up_request{hard_.term});
}

void raft_core::tick_leader() {
  ++heartbeat_elapsed_;
  // The transferee is gone or lost its election: lead on rather than refuse proposals forever.
  if (transferee_ && ++transfer_elapsed_ >= config_.election_timeout_ticks) end_transfer();
  if (maybe_resign()) return;
  if (change_ && !change_->index && ++change_->elapsed >= config_.voter_catch_up_ticks) {
    peers_.erase(change_->v.id);
    abandon_change(errc::request_timed_out);
  }
  // The learner may have become whole, or the others live again, without its match growing.
  if (change_ && !change_->index) maybe_promote(change_->v.id);
  if (++election_elapsed_ >= config_.election_timeout_ticks) {
    election_elapsed_ = 0;
    // Check-quorum: a leader cut off from a majority steps down rather than keep a client
    // waiting on a log that cannot commit.
    if (!quorum_active()) {
      become_follower(hard_.term, std::nullopt);
      return;
    }
  }
  if (heartbeat_elapsed_ >= config_.heartbeat_ticks) {
    heartbeat_elapsed_ = 0;
    for (auto& [id, pr] : peers_) heartbeat(id, pr);
  }
}

void raft_core::step(const message& m) {
  RAFT_INVARIANT(!awaiting_advance_, "step before advance()");
  // Messages from nodes that are no voters here count too (Raft thesis, chapter 4): a learner
  // answers its leader, and a candidate or leader may be a voter in a voter set entry this node
  // has still to receive; refusing its votes can leave no node electable (a node behind on the
  // voter set would refuse the only candidate whose log is up to date). Leader stickiness keeps
  // a removed voter from disrupting a live leader. Whom a tally or a commitment counts is decided
  // by the voter set alone.
  if (m.to != config_.id || m.from == config_.id) return;
  note_sender(m);
  if (m.to_directory != directory_id{} && m.to_directory != config_.directory) return;
  if (m.catching_up) maybe_give_rejoin(m.from);
  const raft_term t = term_of(m.body);

  // A pre-vote or a catch-up request never changes anybody's term: that is their point.
  if (const auto* pv = std::get_if<pre_vote>(&m.body)) {
    on_pre_vote(m, *pv);
    return;
  }
  if (std::holds_alternative<catch_up_request>(m.body)) {
    send(m.from, catch_up_response{hard_.term, fresh()});
    return;
  }
  if (const auto* r = std::get_if<catch_up_response>(&m.body)) {
    on_catch_up_response(m.from, *r);
    return;
  }
  if (t > hard_.term) {
    const auto* v = std::get_if<vote>(&m.body);
    if (v != nullptr && !v->leadership_transfer && in_lease()) return;
    if (const auto* r = std::get_if<pre_vote_response>(&m.body)) {
      // Granted pre-votes carry the term we asked about (ours + 1); a refusal with a higher
      // term means someone is ahead of us.
      if (!r->granted)
        become_follower(t, std::nullopt);
      else
        on_pre_vote_response(m, *r);
      return;
    }
    const bool from_leader = std::holds_alternative<append_entries>(m.body) ||
                             std::holds_alternative<install_snapshot>(m.body);
    become_follower(t, from_leader ? std::optional<node_id>(m.from) : std::nullopt);
  } else if (t < hard_.term) {
    on_stale(m);
    return;
  }

  std::visit(
      [&](const auto& body) {
        using T = std::decay_t<decltype(body)>;
        if constexpr (std::is_same_v<T, pre_vote_response>)
          on_pre_vote_response(m, body);
        else if constexpr (std::is_same_v<T, vote>)
          on_vote(m, body);
        else if constexpr (std::is_same_v<T, vote_response>)
          on_vote_response(m, body);
        else if constexpr (std::is_same_v<T, append_entries>)
          on_append_entries(m.from, body);
        else if constexpr (std::is_same_v<T, append_entries_response>)
          on_append_entries_response(m.from, body);
        else if constexpr (std::is_same_v<T, install_snapshot>)
          on_install_snapshot(m.from, body);
        else if constexpr (std::is_same_v<T, install_snapshot_response>)
          on_install_snapshot_response(m.from, body);
        else if constexpr (std::is_same_v<T, timeout_now>)
          on_timeout_now();
      },
      m.body);
  maybe_rejoined();
}

proposal raft_core::propose(bytes data) {
  RAFT_INVARIANT(!awaiting_advance_, "propose before advance()");
  if (role_ != raft::role::leader)
    return proposal{errc::not_leader_or_follower, log_index{}, leader_};
  // Handing over: the next leader is not known yet.
  if (transferee_) return proposal{errc::not_leader_or_follower, log_index{}, std::nullopt};
  if (data.empty()) return proposal{errc::invalid_request, log_index{}, leader_};
  const log_index index = log_.last_index() + 1;
  log_.append(entry{hard_.term, index, std::move(data)});
  for (auto& [id, pr] : peers_) send_more(id, pr);
  return proposal{errc::none, index, leader_};
}

status raft_core::compact(log_index index, bytes data) {
  RAFT_INVARIANT(!awaiting_advance_, "compact before advance()");
  if (index <= log_.snapshot_index() || index > applied_)
    return make_error(errc::invalid_request, "cannot snapshot at " + num(index.value()) +
                                                 ": snapshot is at " +
                                                 num(log_.snapshot_index().value()) + ", applied " +
                                                 num(applied_.value()));
  const raft_term t = *log_.term_at(index);
  log_.compact(snapshot{snapshot_meta{index, t}, std::move(data), log_.voters_at(index)});
  return {};
}

void raft_core::transfer_leadership() {
  RAFT_INVARIANT(!awaiting_advance_, "transfer_leadership before advance()");
  if (role_ != raft::role::leader || transferee_) return;
  // A whole follower (a catching-up one cannot be elected); one that answered within the last
  // election timeout before one that did not (it may be gone); then the most of the log.
  auto rank = [this](const raft_progress& pr) {
    return std::pair{ticks_ - pr.last_answer_tick() < config_.election_timeout_ticks, pr.match()};
  };
  auto best = peers_.end();
  for (auto it = peers_.begin(); it != peers_.end(); ++it)
    if (is_voter(it->first) && counts(it->first) &&
        (best == peers_.end() || rank(it->second) > rank(best->second)))
      best = it;
  if (best == peers_.end()) return;
  transferee_ = best->first;
  transferee_told_ = false;
  transfer_elapsed_ = 0;
  send_more(best->first, best->second);
  maybe_tell_transferee(best->first, best->second);
}

// --- output ---------------------------------------------------------------------------------

bool raft_core::has_ready() const {
  return hard_ != persisted_hard_ || log_.has_unpersisted() || !outbox_.empty() ||
         applied_ < commit_ || snapshot_to_apply_ || change_end_;
}

ready raft_core::take_ready() {
  RAFT_INVARIANT(!awaiting_advance_, "take_ready twice without advance()");
  ready rd;
  if (hard_ != persisted_hard_) {
    rd.hard_state = hard_;
    persisted_hard_ = hard_;
  }
  log_.take_unpersisted(rd.truncate_from, rd.snapshot, rd.entries);
  rd.apply_snapshot = std::exchange(snapshot_to_apply_, false);
  RAFT_INVARIANT(!rd.apply_snapshot || rd.snapshot, "a snapshot to apply that is not handed out");
  rd.messages = std::exchange(outbox_, {});
  for (log_index i = applied_ + 1; i <= commit_; ++i) rd.committed.push_back(log_.at(i));
  applied_ = commit_;

  uint64_t since = 0;
  uint64_t since_bytes = 0;
  for (log_index i = log_.first_index(); i <= applied_; ++i) {
    ++since;
    since_bytes += log_.at(i).data.size();
  }
  rd.snapshot_due = since >= config_.snapshot_entries || since_bytes >= config_.snapshot_bytes;
  rd.voter_change = std::exchange(change_end_, std::nullopt);
  awaiting_advance_ = true;
  return rd;
}

void raft_core::advance() {
  RAFT_INVARIANT(awaiting_advance_, "advance() without a ready");
  awaiting_advance_ = false;
  // The leader's own entries count towards commitment only now that they are durable.
  if (role_ == raft::role::leader && maybe_commit()) {
    broadcast_append();
    maybe_end_change();
  }
}

// --- elections ------------------------------------------------------------------------------

void raft_core::become_follower(raft_term t, std::optional<node_id> leader) {
  RAFT_INVARIANT(t >= hard_.term,
                 "term " + num(t.value()) + " below current " + num(hard_.term.value()));
  if (t > hard_.term) {
    hard_.term = t;
    hard_.voted_for.reset();
    hard_.voted_for_directory = {};
  }
  abandon_change(errc::not_leader_or_follower);
  role_ = raft::role::follower;
  leader_ = leader;
  peers_.clear();
  end_transfer();
  votes_.clear();
  reset_election_timer();
}

void raft_core::start_pre_vote() {
  abandon_change(errc::not_leader_or_follower);
  role_ = raft::role::pre_candidate;
  leader_.reset();
  peers_.clear();
  votes_.clear();
  reset_election_timer();
  tally(config_.id, true);
  if (role_ != raft::role::pre_candidate) return;
  for (const auto& v : voters())
    if (v.id != config_.id)
      send(v.id, pre_vote{hard_.term.next(), log_.last_index(), log_.last_term()});
}

void raft_core::start_election(bool transfer) {
  role_ = raft::role::candidate;
  hard_.term = hard_.term.next();
  hard_.voted_for = config_.id;
  hard_.voted_for_directory = config_.directory;
  leader_.reset();
  votes_.clear();
  reset_election_timer();
  tally(config_.id, true);
  if (role_ != raft::role::candidate) return;
  for (const auto& v : voters())
    if (v.id != config_.id)
      send(v.id, vote{hard_.term, log_.last_index(), log_.last_term(), transfer});
}

void raft_core::become_leader() {
  role_ = raft::role::leader;
  resigning_ = false;
  leader_ = config_.id;
  votes_.clear();
  heartbeat_elapsed_ = 0;
  election_elapsed_ = 0;
  peers_.clear();
  end_transfer();
  for (const auto& v : voters())
    if (v.id != config_.id) peers_.emplace(v.id, raft_progress(log_.last_index() + 1));
  // Entries of earlier terms commit only once an entry of this term does (§5.4.2): the no-op
  // makes that happen without waiting for a client.
  log_.append(entry{hard_.term, log_.last_index() + 1, {}});
  for (auto& [id, pr] : peers_) send_append(id, pr, true);
}

void raft_core::tally(node_id from, bool granted) {
  if (!is_voter(from)) return;
  votes_.emplace(from, granted);
  size_t yes = 0;
  size_t no = 0;
  for (const auto& [id, g] : votes_) (g ? yes : no) += 1;
  if (yes >= quorum()) {
    if (role_ == raft::role::pre_candidate)
      start_election();
    else
      become_leader();
  } else if (no >= quorum()) {
    become_follower(hard_.term, std::nullopt);
  }
}

// Nobody catching up takes part in an election: not as a voter (it may have voted in this term
// before it lost its state, or lack entries it acknowledged), nor as a candidate.
void raft_core::on_pre_vote(const message& msg, const pre_vote& m) {
  const bool grant = !hard_.catching_up && !msg.catching_up && m.term > hard_.term && !in_lease() &&
                     log_.is_up_to_date(m.last_log_index, m.last_log_term);
  send(msg.from, pre_vote_response{grant ? m.term : hard_.term, grant});
}

void raft_core::on_pre_vote_response(const message& msg, const pre_vote_response& m) {
  if (role_ != raft::role::pre_candidate) return;
  if (m.granted && m.term == hard_.term.next())
    tally(msg.from, !msg.catching_up);
  else if (!m.granted && m.term == hard_.term)
    tally(msg.from, false);
}

void raft_core::on_vote(const message& msg, const vote& m) {
  // One vote per term, for one incarnation of one candidate, and none for another once this
  // term's leader is known.
  const bool same = hard_.voted_for == msg.from && hard_.voted_for_directory == msg.from_directory;
  const bool can_vote = same || (!hard_.voted_for && !leader_);
  const bool grant = !hard_.catching_up && !msg.catching_up && can_vote &&
                     log_.is_up_to_date(m.last_log_index, m.last_log_term);
  if (grant) {
    hard_.voted_for = msg.from;
    hard_.voted_for_directory = msg.from_directory;
    reset_election_timer();
  }
  send(msg.from, vote_response{hard_.term, grant});
}

void raft_core::on_vote_response(const message& msg, const vote_response& m) {
  if (role_ == raft::role::candidate) tally(msg.from, m.granted && !msg.catching_up);
}

void raft_core::on_catch_up_response(node_id from, const catch_up_response& m) {
  if (!hard_.catching_up) return;
  fresh_answers_[from] = m.fresh;
  maybe_bootstrap();
}

void raft_core::maybe_bootstrap() {
  // A learner is whole once it rejoins like any node that is catching up.
  if (!hard_.catching_up || !is_voter(config_.id)) return;
  if (voters().size() > 1) {
    if (!fresh()) return;
    for (const auto& v : voters()) {
      if (v.id == config_.id) continue;
      const auto answer = fresh_answers_.find(v.id);
      if (answer == fresh_answers_.end() || !answer->second) return;
    }
  }
  hard_.catching_up = false;
  fresh_answers_.clear();
  reset_election_timer();
}

void raft_core::maybe_rejoined() {
  if (!hard_.catching_up || !rejoin_ || commit_ < rejoin_->first ||
      log_.term_at(rejoin_->first) != rejoin_->second)
    return;
  hard_.catching_up = false;
  rejoin_.reset();
  fresh_answers_.clear();
}

void raft_core::on_stale(const message& m) {
  if (const auto* ae = std::get_if<append_entries>(&m.body))
    send(m.from, append_entries_response{hard_.term, false, ae->prev_log_index, log_.last_index(),
                                         raft_term{}, log_index{}});
  else if (std::holds_alternative<install_snapshot>(m.body))
    send(m.from, install_snapshot_response{hard_.term, log_index{}});
  else if (std::holds_alternative<vote>(m.body))
    send(m.from, vote_response{hard_.term, false});
}

// Straight to a real election: a pre-vote would be refused by the voters still in the old
// leader's lease, which the transfer vote's flag overrides.
void raft_core::on_timeout_now() {
  if (role_ == raft::role::leader || hard_.catching_up || !may_campaign()) return;
  start_election(true);
}

// --- follower side of replication -----------------------------------------------------------

void raft_core::on_append_entries(node_id from, const append_entries& m) {
  // Two leaders in one term cannot exist; a peer claiming so is ignored rather than trusted.
  if (role_ == raft::role::leader) return;
  if (role_ != raft::role::follower) become_follower(hard_.term, from);
  leader_ = from;
  election_elapsed_ = 0;
  if (hard_.catching_up && m.rejoin_index != log_index{}) rejoin_ = {m.rejoin_index, m.term};

  log_index prev = m.prev_log_index;
  raft_term prev_term = m.prev_log_term;
  std::span<const entry> entries = m.entries;
  // Entries up to the commit index are committed and so already match the leader's (§5.4):
  // skip them, whatever a delayed message says.
  if (prev < commit_) {
    const uint64_t skip = std::min<uint64_t>(commit_ - prev, entries.size());
    if (skip == entries.size()) {
      send(from, append_entries_response{hard_.term, true, prev + entries.size(), log_.last_index(),
                                         raft_term{}, log_index{}});
      return;
    }
    entries = entries.subspan(skip);
    prev = commit_;
    prev_term = *log_.term_at(commit_);
  }

  if (!log_.matches(prev, prev_term)) {
    append_entries_response r{hard_.term,        false,       m.prev_log_index,
                              log_.last_index(), raft_term{}, log_index{}};
    if (prev <= log_.last_index()) {
      r.conflict_term = *log_.term_at(prev);
      r.conflict_index = log_.first_index_of_term_at(prev, commit_);
    }
    send(from, r);
    return;
  }

  for (const entry& e : entries) {
    if (e.index <= log_.last_index()) {
      if (log_.matches(e.index, e.term)) continue;
      RAFT_INVARIANT(e.index > commit_, "conflict at " + num(e.index.value()) +
                                            " at or below commit " + num(commit_.value()));
      log_.truncate_from(e.index);
    }
    log_.append(e);
  }
  const log_index last_new = prev + entries.size();
  commit_ = std::max(commit_, std::min(m.leader_commit, last_new));
  send(from, append_entries_response{hard_.term, true, last_new, log_.last_index(), raft_term{},
                                     log_index{}});
}

void raft_core::on_install_snapshot(node_id from, const install_snapshot& m) {
  if (role_ == raft::role::leader) return;
  if (role_ != raft::role::follower) become_follower(hard_.term, from);
  leader_ = from;
  election_elapsed_ = 0;

  const snapshot_meta& meta = m.snap.meta;
  if (meta.index <= commit_) {
    send(from, install_snapshot_response{hard_.term, commit_});
    return;
  }
  if (log_.matches(meta.index, meta.term)) {
    // The log already holds what the snapshot covers: commit through it and apply as usual.
    commit_ = meta.index;
  } else {
    log_.install(m.snap);
    commit_ = meta.index;
    applied_ = meta.index;
    snapshot_to_apply_ = true;
  }
  send(from, install_snapshot_response{hard_.term, meta.index});
}

// --- leader side of replication -------------------------------------------------------------

void raft_core::on_append_entries_response(node_id from, const append_entries_response& m) {
  if (role_ != raft::role::leader) return;
  const auto tracked = peers_.find(from);
  if (tracked == peers_.end()) return;
  auto& pr = tracked->second;
  pr.mark_active(ticks_);
  // Only an answer to an append counts against the loss of appends in flight: a follower that
  // answers heartbeats alone may have lost them (see heartbeat()).
  if (!m.success || m.index > pr.match()) pr.responded();
  if (m.success) {
    if (pr.acknowledge(m.index)) {
      if (pr.state() == progress_state::probe)
        pr.become_replicate();
      else if (pr.state() == progress_state::snapshot) {
        pr.become_probe(pr.match() + 1);
        pr.become_replicate();
      }
      maybe_tell_transferee(from, pr);
      maybe_promote(from);
      if (maybe_commit()) {
        broadcast_append();
        maybe_end_change();
        return;
      }
    }
    send_more(from, pr);
    return;
  }

  // A refusal of an older probe or of an append already overtaken is stale.
  const log_index rejected = m.index;
  switch (pr.state()) {
  case progress_state::replicate:
    if (rejected <= pr.match()) return;
    break;
  case progress_state::probe:
    if (pr.next() != rejected + 1) return;
    break;
  case progress_state::snapshot:
    return;
  }
  log_index next = m.last_index + 1;
  if (m.conflict_term != raft_term{}) {
    const auto ours = log_.last_index_of_term(m.conflict_term);
    next = ours ? *ours + 1 : m.conflict_index;
  }
  pr.become_probe(std::min(next, rejected));
  send_append(from, pr, true);
}

void raft_core::on_install_snapshot_response(node_id from, const install_snapshot_response& m) {
  if (role_ != raft::role::leader) return;
  const auto tracked = peers_.find(from);
  if (tracked == peers_.end()) return;
  auto& pr = tracked->second;
  pr.mark_active(ticks_);
  pr.responded();
  const bool grew = pr.acknowledge(m.last_index);
  if (pr.state() == progress_state::snapshot) {
    pr.become_probe(pr.match() + 1);
    send_append(from, pr, true);
  }
  if (grew) {
    maybe_tell_transferee(from, pr);
    maybe_promote(from);
  }
  if (grew && maybe_commit()) {
    broadcast_append();
    maybe_end_change();
  }
}

bool raft_core::send_append(node_id to, raft_progress& pr, bool allow_empty) {
  if (pr.next() <= log_.snapshot_index()) {
    send_snapshot(to, pr);
    return true;
  }
  const log_index prev = pr.next() - 1;
  auto entries =
      log_.slice(pr.next(), config_.max_entries_per_append, config_.max_bytes_per_append);
  if (entries.empty() && !allow_empty) return false;
  send(to, append_entries{hard_.term, prev, *log_.term_at(prev),
                          std::vector<entry>(entries.begin(), entries.end()), commit_,
                          counts(to) ? log_index{} : pr.rejoin_index()});
  if (pr.state() == progress_state::replicate) {
    if (!entries.empty()) pr.sent_entries(entries.back().index);
  } else {
    pr.sent_probe();
  }
  return true;
}

void raft_core::send_snapshot(node_id to, raft_progress& pr) {
  pr.become_snapshot(log_.snapshot_index());
  send(to, install_snapshot{hard_.term, log_.latest_snapshot()});
}

// An empty append at the follower's match index: keeps its election timer quiet and carries the
// commit index without ever being refused.
void raft_core::send_heartbeat(node_id to, raft_progress& pr) {
  const auto match_term = log_.term_at(pr.match());
  if (!match_term) {
    // The match point is compacted away: fall back to probing (which sends the snapshot).
    pr.become_probe(pr.match() + 1);
    send_append(to, pr, true);
    return;
  }
  send(to, append_entries{hard_.term,
                          pr.match(),
                          *match_term,
                          {},
                          commit_,
                          counts(to) ? log_index{} : pr.rejoin_index()});
}

void raft_core::send_more(node_id to, raft_progress& pr) {
  switch (pr.state()) {
  case progress_state::replicate:
    while (pr.inflight() < config_.max_inflight_appends && send_append(to, pr, false)) {
      if (pr.state() != progress_state::replicate) break;
    }
    break;
  case progress_state::probe:
    if (!pr.probe_sent()) send_append(to, pr, true);
    break;
  case progress_state::snapshot:
    break;
  }
}

// After the commit index moved: followers learn it from the next append, or from an empty one.
void raft_core::broadcast_append() {
  for (auto& [id, pr] : peers_) {
    if (pr.state() == progress_state::replicate) {
      const size_t before = pr.inflight();
      send_more(id, pr);
      if (pr.state() == progress_state::replicate && pr.inflight() == before)
        send_heartbeat(id, pr);
    } else {
      send_more(id, pr);
    }
  }
}

void raft_core::heartbeat(node_id to, raft_progress& pr) {
  const bool responded = pr.take_responded();
  switch (pr.state()) {
  case progress_state::probe:
    send_append(to, pr, true);
    break;
  case progress_state::snapshot:
    send_snapshot(to, pr);
    break;
  case progress_state::replicate:
    // Appends out and none answered for a whole heartbeat: assume them lost and probe again.
    if (pr.inflight() > 0 && !responded) {
      pr.become_probe(pr.match() + 1);
      send_append(to, pr, true);
    } else {
      send_heartbeat(to, pr);
    }
    break;
  }
}

bool raft_core::maybe_commit() {
  // A catching-up follower holds what it acknowledged, but may have lost what it acknowledged
  // before: it does not count until it is whole (docs/controller.md, "Quorum identity").
  // Only voters count: a learner's or a removed voter's log is no promise (and a leader that
  // removed itself leads on without counting itself).
  std::vector<log_index> matches;
  for (const auto& v : voters()) {
    if (v.id == config_.id) {
      matches.push_back(log_.persisted_index());
      continue;
    }
    const auto pr = peers_.find(v.id);
    matches.push_back(pr != peers_.end() && counts(v.id) ? pr->second.match() : log_index{});
  }
  std::sort(matches.begin(), matches.end(), std::greater<>());
  const log_index n = matches[quorum() - 1];
  // Only an entry of the current term commits by counting replicas (§5.4.2, figure 8).
  if (n <= commit_ || log_.term_at(n) != hard_.term) return false;
  commit_ = n;
  return true;
}

bool raft_core::quorum_active() {
  size_t active = is_voter(config_.id) ? 1 : 0;
  for (auto& [id, pr] : peers_) active += pr.take_active() && counts(id) && is_voter(id) ? 1 : 0;
  return active >= quorum();
}

void raft_core::end_transfer() {
  transferee_.reset();
  transferee_told_ = false;
}

void raft_core::maybe_tell_transferee(node_id peer, const raft_progress& pr) {
  if (transferee_ != peer || transferee_told_ || pr.match() != log_.last_index() || !counts(peer))
    return;
  transferee_told_ = true;
  send(peer, timeout_now{hard_.term});
}

// The rejoin entry is appended after this leader heard from the catching-up follower, so no
// voter's log held it before that follower lost its state: a candidate that lacks it cannot be
// elected once it is committed (docs/controller.md, "Quorum identity"). A given one stands until
// compacted away (the follower may have missed it: it gets another).
void raft_core::maybe_give_rejoin(node_id peer) {
  if (role_ != raft::role::leader || transferee_) return;
  auto pr = peers_.find(peer);
  if (pr == peers_.end() || counts(peer) || pr->second.rejoin_index() > log_.snapshot_index())
    return;
  const log_index r = log_.last_index() + 1;
  log_.append(entry{hard_.term, r, {}});
  pr->second.set_rejoin_index(r);
  for (auto& [id, p] : peers_) send_more(id, p);
}

// --- voter changes ---------------------------------------------------------------------------

// One change at a time, each taking effect when appended, is safe because any two majorities of
// voter sets one node apart overlap (thesis §4.1). A new leader may hold an uncommitted change
// of its predecessor's: it must commit an entry of its own term first, or two changes could be
// in flight across a leader change (the single-server change bug Ongaro described in 2015).
std::optional<proposal> raft_core::refuse_voter_change() const {
  if (role_ != raft::role::leader)
    return proposal{errc::not_leader_or_follower, log_index{}, leader_};
  if (transferee_) return proposal{errc::not_leader_or_follower, log_index{}, std::nullopt};
  const auto pending = log_.last_voters_index();
  if (change_ || log_.term_at(commit_) != hard_.term || (pending && *pending > commit_))
    return proposal{errc::request_timed_out, log_index{}, leader_};
  return std::nullopt;
}

proposal raft_core::add_voter(voter v) {
  RAFT_INVARIANT(!awaiting_advance_, "add_voter before advance()");
  if (auto refused = refuse_voter_change()) return *refused;
  if (is_voter(v.id)) return proposal{errc::duplicate_voter, log_index{}, leader_};
  if (v.id.value() < 0 || v.endpoint.size() > max_endpoint_bytes ||
      voters().size() >= max_voters)
    return proposal{errc::invalid_request, log_index{}, leader_};
  const node_id id = v.id;
  change_ = voter_change{std::move(v), true, 0, std::nullopt};
  auto [pr, _] = peers_.insert_or_assign(id, raft_progress(log_.last_index() + 1));
  send_append(id, pr->second, true);
  return proposal{errc::none, log_index{}, leader_};
}

proposal raft_core::remove_voter(node_id id) {
  RAFT_INVARIANT(!awaiting_advance_, "remove_voter before advance()");
  if (auto refused = refuse_voter_change()) return *refused;
  if (!is_voter(id)) return proposal{errc::voter_not_found, log_index{}, leader_};
  if (voters().size() == 1) return proposal{errc::invalid_request, log_index{}, leader_};
  auto next = without_voter(voters(), id);
  if (!live_quorum(next)) return proposal{errc::request_timed_out, log_index{}, leader_};
  voter removed;
  removed.id = id;
  change_ = voter_change{std::move(removed), false, 0, std::nullopt};
  // The removed voter stays a peer until the entry commits, so it learns of its removal rather
  // than campaign with a log that no longer grows.
  append_voters(next);
  return proposal{errc::none, *change_->index, leader_};
}

void raft_core::append_voters(const voter_set& s) {
  const log_index index = log_.last_index() + 1;
  log_.append(entry{hard_.term, index, encode_voter_set(s), entry_kind::voters});
  change_->index = index;
  for (auto& [id, pr] : peers_) send_more(id, pr);
}

// Caught up means holding every committed entry (KIP-853 waits for the same): the new voter
// then cannot hold back the commitment of what the others already agreed on. It must also be
// whole: a voter that is catching up neither votes nor counts, so adding one would only raise
// the majority (the cluster test that replaces a lost voter found a quorum stuck for good that
// way, when the lost one still looked alive).
void raft_core::maybe_promote(node_id peer) {
  if (!change_ || !change_->add || change_->index || change_->v.id != peer || transferee_ ||
      !counts(peer))
    return;
  const auto known = peer_ids_.find(peer);
  if (known == peer_ids_.end() || known->second.directory == directory_id{}) return;
  if (change_->v.directory != directory_id{} && change_->v.directory != known->second.directory)
    return;
  if (peers_.at(peer).match() < commit_) return;
  change_->v.directory = known->second.directory;
  auto next = with_voter(voters(), change_->v);
  if (!live_quorum(next)) return;
  append_voters(next);
}

// Like etcd's strict reconfiguration check: a set whose majority is not up and whole now could
// not commit its own entry, and the voters that have it (their log being the most up to date)
// could then elect nobody. The leader counts if it is in the set; a peer if it answered within
// the last election timeout and is not catching up.
bool raft_core::live_quorum(const voter_set& s) const {
  size_t live = 0;
  for (const auto& v : s) {
    if (v.id == config_.id) {
      ++live;
      continue;
    }
    const auto pr = peers_.find(v.id);
    if (pr != peers_.end() && counts(v.id) &&
        ticks_ - pr->second.last_answer_tick() < config_.election_timeout_ticks)
      ++live;
  }
  return live >= s.size() / 2 + 1;
}

void raft_core::maybe_end_change() {
  if (!change_ || !change_->index || commit_ < *change_->index) return;
  change_end_ = voter_change_end{change_->v.id, change_->add, errc::none, *change_->index};
  change_.reset();
  std::erase_if(peers_, [this](const auto& p) { return !is_voter(p.first); });
  maybe_resign();
}

// A node whose removal is not known to be committed may still be needed: with its log the most
// up to date, no other could be elected (Raft thesis, chapter 4). So a node campaigns if it is a
// voter in any voter set from its commit index on; its commit index may lag, so a set after it
// may be committed already. A learner, or a voter whose removal it knows committed, never does.
// Campaigning is only asking: the voters of its latest set decide.
bool raft_core::may_campaign() const {
  for (const voter_set* s : log_.voter_sets_from(commit_))
    if (contains(s->empty() ? bootstrap_ : *s, config_.id)) return true;
  return false;
}

bool raft_core::maybe_resign() {
  if (role_ != raft::role::leader || is_voter(config_.id) || transferee_) return false;
  if (const auto pending = log_.last_voters_index(); pending && *pending > commit_) return false;
  if (!resigning_) {
    resigning_ = true;
    transfer_leadership();
    if (transferee_) return false;
  }
  become_follower(hard_.term, std::nullopt);
  return true;
}

void raft_core::abandon_change(errc code) {
  if (!change_) return;
  change_end_ = voter_change_end{change_->v.id, change_->add, code,
                                 change_->index.value_or(log_index{})};
  change_.reset();
}

} // namespace capstan::raft
