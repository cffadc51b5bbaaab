#pragma once

// A deterministic simulation of the controller quorum (docs/controller.md, "Simulation"): N
// quorum members (quorum_member: the Raft core, raft_storage over in-memory disks and the metadata
// image), each with the active controller's logic beside it driven as controller_actor drives it
// (last-replica-standing recovery included), and brokers that register (naming the last process
// on their data dir, or none on a new one), heartbeat (with the logs of their replicas whose
// partition has no leader), crash and come back as new incarnations, append records to the
// partitions they lead, copy their leaders' logs as followers and, as leaders, shrink and expand
// ISRs with AlterPartition; a replica's log is the leader epoch of each record
// (simulated_log.hpp), kept across a crash and lost with its data dir. Clients create topics and
// ask for preferred leader elections. One seeded generator picks every step: deliver,
// drop or duplicate a message (Raft frames, requests, answers), tick a voter (its clock), let a
// broker act, partition the network or heal it, crash a voter (cutting a disk write short, so that
// raft_storage recovers a torn append), lose or damage a voter's disk (it comes back catching up),
// crash and restart brokers (some on a new data dir), hand the quorum's leadership over.
//
// raft_invariant_checker checks the Raft layer after every step and controller_invariant_checker
// every image a member applies or loads; the simulation itself checks that acknowledged records
// (held by the leader and the ISR, at least min.insync.replicas of them) stay acknowledged and
// that a leader recovery elects holds them all.
//
// After the fault phase the network heals, every process restarts and faults stop: then an
// active controller must have every broker registered and unfenced, every partition led with its
// whole replica set in the ISR (one whose ISR emptied comes back through last-replica-standing
// recovery; but for those too many of whose replicas came back on new data dirs, which wait for
// an operator by design), and a topic created through it must reach every voter's image.
//
// The same options give the same run, step for step: a failing seed replays exactly.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace capstan::controller::test {

struct controller_sim_options {
  size_t voters = 3;
  // Node ids 1..brokers; the first `voters` of them run a voter too.
  size_t brokers = 4;
  uint64_t seed = 0;
  size_t fault_steps = 300;
  // Bound on the liveness phase (steps after faults stop).
  size_t liveness_steps = 6000;
  // Prints every step to stderr.
  bool trace = false;
};

struct controller_sim_stats {
  size_t steps = 0;
  size_t frames_delivered = 0;
  size_t voter_crashes = 0;
  size_t torn_writes = 0;
  size_t disks_lost = 0; // lost or damaged
  size_t activations = 0;
  size_t registrations = 0; // committed, each a new incarnation's
  size_t fencings = 0;      // by session expiry
  size_t isr_changes = 0;   // AlterPartition items accepted
  size_t recoveries = 0;    // leaders elected by last-replica-standing recovery
  size_t acknowledged = 0;  // records acknowledged at the end (acks=all)
  size_t topics = 0;
  size_t snapshots_loaded = 0;
  size_t entries_applied = 0;
  size_t liveness_steps = 0;
  // Partitions left without a leader at the end because too many of their replicas came back on
  // new data dirs to recover them (only unclean leader election would).
  size_t waiting_for_operator = 0;
};

struct controller_sim_result {
  // Set when an invariant broke or liveness failed; `step` says where.
  std::optional<std::string> failure;
  size_t step = 0;
  // A hash of the steps taken: equal for equal runs.
  uint64_t fingerprint = 0;
  controller_sim_stats stats;
};

controller_sim_result run_controller_simulation(const controller_sim_options& options);

} // namespace capstan::controller::test
