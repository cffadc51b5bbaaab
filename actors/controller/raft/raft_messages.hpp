#pragma once

// The messages Raft nodes exchange, as plain structs (docs/controller.md). The core consumes and
// produces these; raft_codec turns them into Cap'n Proto frames (schema/raft.capnp) for the wire.
// Every message carries the sender's term; `from` and `to` are voter ids, with the directory ids
// that tell one incarnation of a voter from the next (docs/controller.md, "Quorum identity").

#include <variant>
#include <vector>

#include "actors/controller/raft/raft_types.hpp"

namespace capstan::raft {

// "Would you vote for me in `term`?" (thesis §9.6). Sent with term = the sender's term + 1
// without changing the sender's own term, so a node that cannot win never disturbs the others.
struct pre_vote {
  raft_term term;
  log_index last_log_index;
  raft_term last_log_term;

  bool operator==(const pre_vote&) const = default;
};

// Granted: term is the pre-vote's term. Refused: term is the responder's current term.
struct pre_vote_response {
  raft_term term;
  bool granted = false;

  bool operator==(const pre_vote_response&) const = default;
};

struct vote {
  raft_term term;
  log_index last_log_index;
  raft_term last_log_term;
  // Sent by the node a leader handed its leadership to (timeout_now): voters grant it despite
  // their lease, which would otherwise have them wait for the old leader to fall silent.
  bool leadership_transfer = false;

  bool operator==(const vote&) const = default;
};

struct vote_response {
  raft_term term;
  bool granted = false;

  bool operator==(const vote_response&) const = default;
};

// Entries hold consecutive indexes from prev_log_index + 1 (the codec checks this on decode).
struct append_entries {
  raft_term term;
  log_index prev_log_index;
  raft_term prev_log_term;
  std::vector<entry> entries;
  log_index leader_commit;
  // To a follower that is catching up (hard_state::catching_up): an entry this leader appended
  // after hearing from it; once that entry is in the follower's log and committed, the follower
  // is whole again. 0: none yet.
  log_index rejoin_index{};

  bool operator==(const append_entries&) const = default;
};

// success: the follower's log matches the leader's up to `index` (prev_log_index plus the
// entries sent). Refused: `index` is the prev_log_index the follower refused, and the hint
// tells the leader where to retry without walking back one entry at a time (§5.3, end):
// either the follower's log ends before it (conflict_term is 0, last_index is the end), or the
// follower holds conflict_term there, first at conflict_index.
struct append_entries_response {
  raft_term term;
  bool success = false;
  log_index index;
  log_index last_index;
  raft_term conflict_term;
  log_index conflict_index;

  bool operator==(const append_entries_response&) const = default;
};

// The whole snapshot in one message: metadata snapshots are small.
struct install_snapshot {
  raft_term term;
  snapshot snap;

  bool operator==(const install_snapshot&) const = default;
};

// `last_index`: the follower's log matches the leader's up to it after handling the snapshot.
struct install_snapshot_response {
  raft_term term;
  log_index last_index;

  bool operator==(const install_snapshot_response&) const = default;
};

// A leader handing over its leadership tells the chosen follower, once that follower's log
// matches its own, to start an election at once (thesis §3.10).
struct timeout_now {
  raft_term term;

  bool operator==(const timeout_now&) const = default;
};

// A voter that is catching up and knows no leader asks every voter where it stands, so that a
// leader learns its new directory id, and a quorum whose voters all start empty can begin.
// It changes nobody's term, as a pre-vote does not.
struct catch_up_request {
  raft_term term;

  bool operator==(const catch_up_request&) const = default;
};

// `fresh`: the responder has never been in a term above 0 nor held an entry.
struct catch_up_response {
  raft_term term;
  bool fresh = false;

  bool operator==(const catch_up_response&) const = default;
};

using message_body =
    std::variant<pre_vote, pre_vote_response, vote, vote_response, append_entries,
                 append_entries_response, install_snapshot, install_snapshot_response, timeout_now,
                 catch_up_request, catch_up_response>;

struct message {
  node_id from;
  node_id to;
  message_body body;
  directory_id from_directory{};
  // The receiver's directory id as the sender knows it; zero when it does not.
  directory_id to_directory{};
  // The sender is catching up (hard_state::catching_up): its grants and acknowledgements do not
  // count.
  bool catching_up = false;

  bool operator==(const message&) const = default;
};

// The term the message carries, whichever kind it is.
raft_term term_of(const message_body& body);

} // namespace capstan::raft
