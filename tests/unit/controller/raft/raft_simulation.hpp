#pragma once

// A deterministic simulation of a Raft quorum (docs/controller.md, "Simulation"): N raft_cores
// with in-memory disks on a simulated network, driven by one seeded generator that picks every
// step: deliver a random in-flight message (so any order), drop or duplicate one, tick a node,
// propose at a node, partition the network or heal it, crash a node (it keeps exactly what the
// ready/persist protocol made durable, optionally cutting a persist part-way), restart one,
// have a leader hand its leadership over, lose or damage a node's disk (it comes back with a new
// directory id, catching up, as raft_storage makes it; never so many that fewer than a majority
// are whole), add or remove a voter (with sim_options::voter_changes), and hand a node's ready to
// its driver. One seed in eight starts every node on a new
// directory, so the quorum first finds out that it is new (docs/controller.md, "Quorum
// identity"); the others start as such a quorum is once it has.
// raft_invariant_checker runs after every step. After the fault phase the network heals, crashed
// nodes restart and faults stop: then a leader must be elected and a new proposal applied on every
// node within a bounded number of steps.
//
// The same options give the same run, step for step: a failing seed replays exactly.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "actors/controller/raft/raft_messages.hpp"

namespace capstan::raft::test {

struct sim_options {
  size_t nodes = 3;
  uint64_t seed = 0;
  size_t fault_steps = 1500;
  // Bound on the liveness phase (steps after faults stop).
  size_t liveness_steps = 20000;
  // Prints every step to stderr.
  bool trace = false;
  // A broken driver that sends a ready's messages before persisting it (violating the
  // contract in raft_ready.hpp); only to show that the checker notices.
  bool send_before_persist = false;
  // One more node, not a voter at first, and leaders that add and remove voters at random
  // (docs/controller.md, "Voter changes"). Disks are then never lost or damaged: which voters
  // must stay whole for Raft to promise anything would depend on the voter set of the moment.
  bool voter_changes = false;
};

struct sim_stats {
  size_t steps = 0;
  size_t delivered = 0;
  size_t crashes = 0;
  size_t torn_persists = 0;
  size_t leaders = 0;   // distinct (term, leader) pairs seen
  size_t committed = 0; // distinct committed indexes seen
  size_t snapshots_installed = 0;
  size_t compactions = 0;
  size_t transfer_votes = 0; // votes of a leadership transfer delivered
  size_t disks_lost = 0;     // lost or damaged
  size_t voters_added = 0;   // voter changes that committed
  size_t voters_removed = 0;
  size_t liveness_steps = 0;
};

struct sim_result {
  // Set when an invariant broke or liveness failed; `step` says where.
  std::optional<std::string> failure;
  size_t step = 0;
  // A hash of the steps taken: equal for equal runs.
  uint64_t fingerprint = 0;
  sim_stats stats;
};

sim_result run_simulation(const sim_options& options);

// One line for a trace: "1->2 AppendEntries t3 prev 4/t2 n=1 commit 4".
std::string describe(const message& m);

// The step a running simulation is at, for a crash handler to print (a broken RAFT_INVARIANT
// aborts the process). Not thread-safe; the simulation is single-threaded.
struct sim_position {
  uint64_t seed = 0;
  size_t nodes = 0;
  size_t step = 0;
};
const sim_position& current_sim_position();

} // namespace capstan::raft::test
