#pragma once

// What the core asks its driver to do, in one batch (etcd/raft's "Ready"). The driver handles a
// batch in this order, and the order is part of Raft's safety argument (docs/controller.md,
// "Persistence contract"):
//
//   1. Make durable, in this order: hard_state; the truncation (drop every entry with index >=
//      truncate_from); the snapshot (write it, then drop the entries it covers); entries
//      (append). A crash part-way leaves a prefix of these steps done, and every such prefix is
//      a state the core restarts from safely: nothing that depends on the batch was sent yet.
//   2. Only then send `messages`. They promise what step 1 made durable: a vote, an
//      acknowledged entry (Raft §5: persist before responding).
//   3. Apply: if apply_snapshot, load `snapshot` into the state machine; then apply `committed`
//      in order (entries with empty data are leader no-ops and change nothing).
//   4. Call raft_core::advance(). Until then the core takes no other input.

#include <optional>
#include <vector>

#include "actors/controller/raft/raft_messages.hpp"
#include "actors/controller/raft/raft_types.hpp"
#include "runtime/errc.hpp"

namespace capstan::raft {

// How a change of the voters that this node started as leader (raft_core::add_voter,
// remove_voter) ended.
struct voter_change_end {
  node_id node;
  bool add = true;
  // NONE: the voter set entry committed at `index`. REQUEST_TIMED_OUT: the node to add did not
  // catch up within the change timeout; nothing was appended. NOT_LEADER_OR_FOLLOWER: this node
  // stopped leading first; when `index` is set the entry may still commit under the next leader.
  errc code = errc::none;
  log_index index;
};

struct ready {
  std::optional<raft::hard_state> hard_state;
  std::optional<log_index> truncate_from;
  // A snapshot to persist: one the application took (compact()), or one received from the
  // leader, which the state machine must then load (apply_snapshot).
  std::optional<raft::snapshot> snapshot;
  bool apply_snapshot = false;
  // Consecutive, starting right after what stays in storage once steps 1's truncation and
  // snapshot are done.
  std::vector<entry> entries;
  std::vector<message> messages;
  // Consecutive, starting right after the last applied index (or the snapshot to apply).
  std::vector<entry> committed;
  // True when the log since the last snapshot passed raft_config::snapshot_entries or
  // snapshot_bytes: the driver may take a snapshot at the applied index and call compact().
  bool snapshot_due = false;
  std::optional<voter_change_end> voter_change;
};

} // namespace capstan::raft
