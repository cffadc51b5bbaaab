#pragma once

// Who may talk to whom in a controller quorum (docs/controller.md, "Quorum identity"). Every Raft
// frame names the sender's cluster id and voter set beside the voter keys (node id and directory
// id) of its sender and receiver; a receiver refuses a frame that is not of its own quorum or not
// for its own incarnation, so that an edited --controller-quorum, a node of another cluster or a
// message for a voter's earlier incarnation can never help make a majority.

#include <string>
#include <vector>

#include "actors/controller/raft/raft_messages.hpp"
#include "runtime/result.hpp"

namespace capstan::raft {

// What every frame of one quorum carries besides its message.
struct quorum_identity {
  std::string cluster_id;
  std::vector<node_id> voters; // ascending, no node twice

  bool operator==(const quorum_identity&) const = default;
};

// `voters` in ascending order: the form quorum_identity holds and frames carry.
std::vector<node_id> sorted_voters(std::vector<node_id> voters);

// Whether a frame that decoded as `m` with `theirs` may reach the core of voter `self`, whose
// directory id is `own`, in quorum `mine`:
// - INCONSISTENT_CLUSTER_ID: the sender is of another cluster;
// - INCONSISTENT_VOTER_SET: the sender has another voter set (another --controller-quorum), or
//   the frame is for another node, or for another directory id of this node (an incarnation
//   before this one lost or damaged its state).
// The errors name both sides, for the log line.
status check_frame(const message& m, const quorum_identity& theirs, const quorum_identity& mine,
                   node_id self, const directory_id& own);

} // namespace capstan::raft
