#pragma once

// The faults of a safety run, drawn from its seed before the run starts: which kinds, in which
// order, how long each lasts, which overlap, and choices (which partition's leader, which peers,
// which direction) kept as raw numbers that the nemesis turns into nodes when the fault starts,
// since who leads what is only known then. Same seed and profile, same schedule; the real timing
// and the nodes a choice lands on may differ between runs.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace capstan::safety {

enum class fault_kind {
  kill_leader,     // kill -9 the leader of a partition, restart it after the duration
  kill_controller, // kill -9 the active controller, restart it after the duration
  kill_node,       // kill -9 any node, restart it after the duration
  kill_all,        // kill -9 every node, restart them all after the duration
  kill_all_two,    // kill -9 every node, restart two, the third only after the duration
  pause,           // SIGSTOP a node for longer than the session timeout, then SIGCONT
  cut_both,        // cut a node off from one or both peers, both ways
  cut_one_way,     // drop what a node sends to, or receives from, one or both peers
  drop_control,    // the active controller loses control messages while a node restarts
  delay_control,   // the active controller's control messages are late while a node restarts
  damage_tail,     // one stopped node's segment tails torn or bit-flipped before its restart
  raise_min_isr,   // min.insync.replicas=3 on a topic while a node is down, then back to 2
  disk_fault,      // every write under one node's data dir fails (ENOSPC, EROFS or EIO), then it
                   // restarts
  wipe_node,       // kill -9 a node, delete its data dir, start it on an empty one after the
                   // duration (a new machine under its id), and wait until it is whole again
};

const char* to_string(fault_kind kind);
// Every kind, in declaration order.
const std::vector<fault_kind>& all_fault_kinds();

struct fault {
  fault_kind kind = fault_kind::kill_node;
  // Raw choices the nemesis maps onto what exists when the fault starts (pick % candidates).
  uint32_t pick = 0;
  uint32_t pick2 = 0;
  // How long the fault holds before it is healed.
  int duration_ms = 0;
  // Kind-specific: control messages to drop, delay in ms, bytes to tear.
  int amount = 0;
  // drop_control: the probability of losing each message after the first `amount` (0: none).
  double probability = 0;
};

// One step: the workload runs `quiet_ms` undisturbed, then `first` starts, and `second`, if any,
// `second_after_ms` later (while the first still holds). Every fault is healed before the step
// ends, and the cluster must then be whole again.
struct fault_step {
  int quiet_ms = 0;
  fault first;
  std::optional<fault> second;
  int second_after_ms = 0;
};

struct fault_schedule {
  std::string origin; // "seed N, profile P" or "scenario S"
  std::vector<fault_step> steps;
  size_t fault_count() const;
};

// `faults` faults drawn from `seed`, about a third of the steps with two overlapping.
fault_schedule draw_schedule(uint64_t seed, int faults, const std::string& profile);

// The fixed schedules that reproduce one behaviour each; nullopt for an unknown name.
std::optional<fault_schedule> scenario_schedule(const std::string& name);
const std::vector<std::string>& scenario_names();

// One line per fault: "step 3: cut_one_way (pick 17/2, 4200 ms) + 1500 ms pause (...)".
std::string to_string(const fault& f);
std::string to_string(const fault_schedule& s);

} // namespace capstan::safety
