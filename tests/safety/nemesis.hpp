#pragma once

// Runs the steps of a fault schedule (fault_schedule.hpp) against the cluster through cluster_ops:
// turns each fault's raw choices into nodes as the cluster is when it starts, holds it, heals it,
// and checks the expectations attached to some kinds:
// - kill-all-two-back: with two of three nodes back, every partition gets a leader within 60 s
//   (min.insync.replicas=2 can still be met): else "offline-with-two-nodes";
// - raise-min-isr: the window in which min.insync.replicas=3 is described and a replica is out of
//   every ISR, which the run checks against what its producers saw acknowledged;
// and after every step, with every fault healed: within 60 s every partition has a leader and a
// full ISR, and takes an acks=all write ("leader-not-serving" after a step that lost or delayed
// control messages, "unavailable" after any other).

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/safety/cluster_ops.hpp"
#include "tests/safety/fault_schedule.hpp"
#include "tests/support/history_check.hpp"

namespace capstan::safety {

// min.insync.replicas=3 held on `topic` with an ISR of two from `from` to `to`: no acks=all record
// sent in it may be acknowledged in it.
struct min_isr_window {
  std::string topic;
  test::workload_clock::time_point from;
  test::workload_clock::time_point to;
};

class nemesis {
public:
  nemesis(cluster_ops& ops, std::vector<test::anomaly>& anomalies);
  nemesis(const nemesis&) = delete;
  nemesis& operator=(const nemesis&) = delete;

  // Runs step `index` (from 1) to its end: faults, heals, and the check that the cluster is whole.
  // False iff that last check failed (the cluster may be stuck).
  bool run(const fault_step& step, int index);

  const std::vector<min_isr_window>& min_isr_windows() const { return windows_; }
  const std::map<fault_kind, int>& faults_by_kind() const { return counts_; }

private:
  // A fault that holds until heal() runs, on `nodes`.
  struct held {
    std::set<int> nodes;
    std::function<void()> heal;
  };

  // Starts a fault that may overlap another (which holds `busy`).
  held start(const fault& f, const std::set<int>& busy);
  // Runs a fault that needs the cluster to itself, heal included.
  void run_alone(const fault& f);

  // A running node not in `busy`, the `pick`-th of them; 0 if none.
  int pick_node(uint32_t pick, const std::set<int>& busy);
  // The other two nodes, or one of them, as `pick` says.
  std::vector<int> pick_peers(int node, uint32_t pick);
  // The active controller within 30 s; 0 if none.
  int await_controller();

  void kill_all_two_back(const fault& f);
  void lose_control(const fault& f, bool drop);
  void damage_tail(const fault& f);
  void raise_min_isr(const fault& f);
  void disk_fault(const fault& f);
  void wipe_node(const fault& f);

  void add(const std::string& kind, const std::string& detail);

  cluster_ops& ops_;
  std::vector<test::anomaly>& anomalies_;
  std::vector<min_isr_window> windows_;
  std::map<fault_kind, int> counts_;
};

} // namespace capstan::safety
