#pragma once

// The controller's Raft core: one node's consensus state machine as a deterministic step
// function (docs/controller.md). No threads, clocks or I/O: the driver feeds it logical time
// (tick), peers' messages (step), proposals and snapshots, and drains what it must do as a
// `ready` batch (raft_ready.hpp states the persistence contract). The same inputs and seed give
// the same outputs, which is what lets tests/unit/controller/raft/raft_simulation drive five of
// them through lost, duplicated and reordered messages, partitions and crashes.
//
// Raft as in Ongaro's thesis with: pre-vote (§9.6), check-quorum (§6.2), leader stickiness
// (a node that heard from a leader within an election timeout ignores votes), a no-op entry per
// new leader so commitment only counts current-term entries (§5.4.2), pipelined replication with
// fast back-off (§5.3), snapshots, leadership transfer (§3.10), and voter changes one at a time
// (§4.1, as KIP-853 does them: a voter set entry takes effect when appended). A voter whose stored state was lost or damaged comes back catching up
// (hard_state::catching_up, docs/controller.md "Quorum identity"): it neither votes nor counts
// towards commitment until an entry a leader appended after hearing from it is committed and in
// its log.
//
// Not thread-safe: one owner (an actor) calls it.

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <vector>

#include "actors/controller/raft/raft_config.hpp"
#include "actors/controller/raft/raft_durable_state.hpp"
#include "actors/controller/raft/raft_log.hpp"
#include "actors/controller/raft/raft_messages.hpp"
#include "actors/controller/raft/raft_progress.hpp"
#include "actors/controller/raft/raft_ready.hpp"
#include "runtime/errc.hpp"
#include "runtime/result.hpp"

namespace capstan::raft {

// Answer to propose(): the entry's index, or why not. NOT_LEADER_OR_FOLLOWER carries the leader
// this node knows of, so the caller can redirect; INVALID_REQUEST for empty data (reserved for
// the leader's no-op).
struct proposal {
  errc code = errc::none;
  log_index index;
  std::optional<node_id> leader;

  bool ok() const { return code == errc::none; }
};

class raft_core {
public:
  // Starts a node, or restarts it from what it made durable before it stopped (a follower with
  // no known leader; commit and applied at the snapshot: the application restores the snapshot
  // and the core hands it the committed entries after it again).
  // REQUIRES: config.voters is not empty and holds no voter twice; config's ticks > 0.
  raft_core(raft_config config, durable_state state);

  raft_core(const raft_core&) = delete;
  raft_core& operator=(const raft_core&) = delete;
  raft_core(raft_core&&) = default;
  raft_core& operator=(raft_core&&) = default;

  // Inputs. REQUIRES for each: no ready taken and not yet advanced.

  // One unit of logical time.
  void tick();
  // A message from a peer. Messages for another node or from itself are ignored; so are stale
  // ones (Raft tolerates loss, duplication and reordering). One for another
  // directory id of this node is ignored too, but teaches which incarnation of the peer sent it:
  // two voters that both took new directory ids would otherwise address each other's old ones,
  // and refuse each other's messages, for ever.
  void step(const message& m);
  // Appends `data` as a new entry if this node is the leader.
  proposal propose(bytes data);
  // The application took a snapshot of its state at `index` (which it has applied): the entries
  // up to it may go. INVALID_REQUEST unless snapshot index < index <= applied_index().
  status compact(log_index index, bytes data);
  // Hands this leader's leadership to the follower holding the most of its log, among those that
  // answered within the last election timeout if any did (thesis §3.10;
  // what KRaft's EndQuorumEpoch does on a clean stop): proposals are refused from now on, that
  // follower is brought up to the end of the log and then told to start an election at once
  // (timeout_now), whose votes the others grant despite their lease. So they need not wait out
  // an election timeout. Gives up after an election timeout with no new leader, and takes
  // proposals again. Does nothing unless this node leads other voters and is not handing over.
  void transfer_leadership();

  // Voter changes, one at a time (docs/controller.md, "Voter changes"). Both are refused at once
  // with NOT_LEADER_OR_FOLLOWER unless this node leads and is not handing over, and with
  // REQUEST_TIMED_OUT while another change is under way or before this leader committed an
  // entry of its term (a retry soon may succeed). Otherwise ready::voter_change says how it
  // ended.
  //
  // Adds `v`: this leader replicates its log to v.id as a learner (a peer whose answers count for
  // nothing) until it holds every committed entry and a majority of the new set is up and whole,
  // then appends the voter set with v added, with the directory id the learner reported
  // (v.directory, when not zero, must match it).
  // DUPLICATE_VOTER if v.id is a voter; INVALID_REQUEST if v's endpoint or the voter count is
  // over the limits of voter_set.hpp.
  proposal add_voter(voter v);
  // Appends the voter set without `id`; the entry's index is in the answer. VOTER_NOT_FOUND if
  // `id` is no voter; INVALID_REQUEST if it is the last one; REQUEST_TIMED_OUT too if the voters
  // left hold no majority that is up and whole now. A leader that removes itself leads
  // until the entry commits (without counting itself), then hands its leadership over.
  proposal remove_voter(node_id id);

  // Output.
  bool has_ready() const;
  // Hands over everything to do; see raft_ready.hpp for the order and the contract.
  ready take_ready();
  // The driver finished the last ready: persisted, sent, applied.
  void advance();

  // Read-only state.
  node_id id() const { return config_.id; }
  // The voters in effect: the last voter set the log holds, committed or not, or the bootstrap
  // voters.
  const voter_set& voters() const;
  bool is_voter(node_id n) const;
  // The node a voter change this leader started is about, while it is under way.
  std::optional<node_id> changing_voter() const;
  raft::role role() const { return role_; }
  raft_term term() const { return hard_.term; }
  std::optional<node_id> voted_for() const { return hard_.voted_for; }
  // This node's stored state was lost or damaged and it has not caught up yet.
  bool catching_up() const { return hard_.catching_up; }
  const directory_id& directory() const { return config_.directory; }
  std::optional<node_id> leader() const { return leader_; }
  log_index commit_index() const { return commit_; }
  log_index last_index() const { return log_.last_index(); }
  // The last index handed to the state machine (through ready::committed or a snapshot).
  log_index applied_index() const { return applied_; }
  const raft_log& log() const { return log_; }
  const raft_config& config() const { return config_; }
  // The follower this leader is handing its leadership to, while it does.
  std::optional<node_id> transferee() const { return transferee_; }
  // The transferee was told to start its election (timeout_now is in a ready's messages).
  bool transferee_told() const { return transferee_told_; }

private:
  // The incarnation of a peer this node last heard from.
  struct peer_identity {
    directory_id directory{};
    bool catching_up = false;
  };

  // A voter change this leader started and has not seen end.
  struct voter_change {
    voter v;
    bool add = true;
    uint32_t elapsed = 0;             // ticks since it started
    std::optional<log_index> index;   // its voter set entry, once appended
  };

  size_t quorum() const { return voters().size() / 2 + 1; }
  bool in_lease() const;
  void reset_election_timer();
  void send(node_id to, message_body body);
  // Records which incarnation of its voter sent `m`; a new one starts the leader's view of that
  // follower afresh.
  void note_sender(const message& m);
  // `peer` was last heard of whole: its acknowledgements count towards commitment.
  bool counts(node_id peer) const;
  // Never in a term above 0 and no entry: what a catch-up response calls fresh.
  bool fresh() const;

  void become_follower(raft_term t, std::optional<node_id> leader);
  void start_pre_vote();
  // `transfer`: this node was told to by the leader handing over (timeout_now).
  void start_election(bool transfer = false);
  void become_leader();
  // Counts `from`'s answer in the current (pre-)election and acts on a decided outcome.
  void tally(node_id from, bool granted);

  void tick_election();
  void tick_catching_up();
  void tick_leader();

  void on_pre_vote(const message& msg, const pre_vote& m);
  void on_pre_vote_response(const message& msg, const pre_vote_response& m);
  void on_vote(const message& msg, const vote& m);
  void on_vote_response(const message& msg, const vote_response& m);
  void on_append_entries(node_id from, const append_entries& m);
  void on_append_entries_response(node_id from, const append_entries_response& m);
  void on_install_snapshot(node_id from, const install_snapshot& m);
  void on_install_snapshot_response(node_id from, const install_snapshot_response& m);
  void on_timeout_now();
  void on_catch_up_response(node_id from, const catch_up_response& m);
  // A catching-up node whose every fellow voter answered fresh, and which is fresh itself, is
  // whole: the quorum is new (or lost everything), so no promise of an earlier incarnation can
  // be held anywhere. A voter alone is whole at once.
  void maybe_bootstrap();
  // A catching-up follower whose rejoin entry is committed and in its log is whole.
  void maybe_rejoined();
  // A message of an older term: answer those that need it so a deposed leader learns the term.
  void on_stale(const message& m);

  // Leader side.
  bool send_append(node_id to, raft_progress& pr, bool allow_empty);
  void send_snapshot(node_id to, raft_progress& pr);
  void send_heartbeat(node_id to, raft_progress& pr);
  // Sends what the follower's state allows: more entries, or a probe if none is out.
  void send_more(node_id to, raft_progress& pr);
  void broadcast_append();
  void heartbeat(node_id to, raft_progress& pr);
  bool maybe_commit();
  bool quorum_active();
  // Tells the transferee to start its election once its log matches this leader's.
  void maybe_tell_transferee(node_id peer, const raft_progress& pr);
  // A catching-up follower this leader hears from gets an entry appended after this leader heard
  // from it, to rejoin at once that entry commits and is in its log.
  void maybe_give_rejoin(node_id peer);
  // No transfer under way (done, given up, or this node's role changed).
  void end_transfer();
  // Why a voter change cannot start now, if it cannot.
  std::optional<proposal> refuse_voter_change() const;
  // Appends voter set `s` as the change under way's entry and sends it.
  void append_voters(const voter_set& s);
  // The learner being added holds every committed entry: append the set with it.
  void maybe_promote(node_id peer);
  // The change's entry committed: report it, forget the peers that are no longer voters, and
  // hand over the leadership if this node is no longer one.
  void maybe_end_change();
  // The change under way ends, unfinished, with `code`.
  void abandon_change(errc code);
  // Whether a majority of `s` is up and whole as this leader sees it.
  bool live_quorum(const voter_set& s) const;
  // Whether this node may start an election: it is a voter, or its removal is not committed.
  bool may_campaign() const;
  // A leader that is no voter, once its voter set is committed, hands its leadership over; if
  // that finds nobody or fails, it steps down. True when it stepped down.
  bool maybe_resign();

  raft_config config_;
  voter_set bootstrap_;
  std::mt19937_64 rng_;
  raft_log log_;
  hard_state hard_;
  hard_state persisted_hard_;

  raft::role role_ = raft::role::follower;
  std::optional<node_id> leader_;
  log_index commit_;
  log_index applied_;
  bool snapshot_to_apply_ = false;

  uint64_t ticks_ = 0; // every tick(), for how long ago a peer answered
  uint32_t election_elapsed_ = 0;
  uint32_t heartbeat_elapsed_ = 0;
  uint32_t randomized_timeout_ = 0;

  std::map<node_id, bool> votes_;          // this (pre-)election's answers, self included
  std::map<node_id, raft_progress> peers_; // leader only
  std::optional<node_id> transferee_;      // leader only
  bool transferee_told_ = false;
  uint32_t transfer_elapsed_ = 0;

  std::map<node_id, peer_identity> peer_ids_;
  std::map<node_id, bool> fresh_answers_; // catching up: each voter's latest catch-up answer
  // Catching up: the rejoin entry (index, term) the leader named last.
  std::optional<std::pair<log_index, raft_term>> rejoin_;

  std::optional<voter_change> change_; // leader only
  bool resigning_ = false;             // leader only: maybe_resign() tried a transfer
  std::optional<voter_change_end> change_end_;

  std::vector<message> outbox_;
  bool awaiting_advance_ = false;
};

} // namespace capstan::raft
