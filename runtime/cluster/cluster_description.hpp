#pragma once

// What `capstan cluster describe` shows of the controller quorum (docs/operations.md, "Reading
// cluster describe"): each voter's report on itself (voter_state, schema/controller.capnp
// VoterState), the reports merged into one description (the gateway's node does this after asking
// every voter), and the description as text (the CLI prints it). Plain values and functions.

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/allowed_unsafe_message_type.hpp>

namespace capstan {

// A node registered with the active controller.
struct registered_node {
  int32_t node = -1;
  bool fenced = true;
  int64_t broker_epoch = -1;
  // The registering process's incarnation id (new at every process start).
  std::array<uint8_t, 16> incarnation{};
};

// One voter's report on itself: its quorum member's Raft state and, while its controller is the
// active one, every registered node (empty otherwise).
struct voter_state {
  int32_t node = -1;
  // raft::to_string of its role: follower, pre-candidate, candidate, leader.
  std::string role;
  int64_t term = 0;
  int64_t commit_index = 0;
  // The leader the member knows of; -1: none.
  int32_t leader = -1;
  bool active = false;
  std::vector<registered_node> nodes;
  // The voters in effect in the member's log (docs/controller.md, "Voter changes"), ascending.
  std::vector<int32_t> voters{};
};

// A voter asked: its report, or why none came (it did not answer in time, is unreachable...).
struct voter_answer {
  int32_t node = -1;
  std::optional<voter_state> state;
  std::string failure;
};

struct quorum_member_state {
  int32_t node = -1;
  bool reachable = false;
  // Why it is unreachable (empty when reachable).
  std::string failure;
  std::string role;
  int64_t term = 0;
  int64_t commit_index = 0;
  int32_t leader = -1;
};

struct cluster_description {
  // -1: no voter reported its controller active.
  int32_t active_controller = -1;
  // By node id.
  std::vector<quorum_member_state> members;
  // True iff the active controller's report (and so `nodes`) is there.
  bool nodes_known = false;
  // By node id.
  std::vector<registered_node> nodes;
  // The voters in effect, ascending: the active controller's member's, else those of the
  // reachable member with the highest term and commit index; empty when no member answered.
  std::vector<int32_t> voters{};
};

// Immutable once built; shared between threads (the gateway's kj thread reads what an actor built).
using cluster_description_ptr = std::shared_ptr<const cluster_description>;

// Members ordered by node id, unreachable where the answer has no state. The active controller is
// the reporting-active voter with the highest term (after a partition heals an old leader may
// still believe itself active for a moment; the newer term wins), and the nodes and voters are
// its report. Without an active controller, the voters are those of the reachable member with the
// highest term, then commit index (the one most likely to hold the latest voter set).
cluster_description merge_voter_answers(std::vector<voter_answer> answers);

// The quorum part of `cluster describe`'s output, one line per member and per node, tab
// separated, ending with a newline (docs/cli.md shows it). An empty `members`: the cluster runs
// no controller quorum (a single node whose metadata actor is its controller).
std::string format_cluster_description(const cluster_description& d);

} // namespace capstan

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::cluster_description_ptr)
