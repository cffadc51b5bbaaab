#pragma once

// One safety run: a 3-node cluster of real `capstan node` processes with the fault switch on, two
// topics with replication factor 3 and min.insync.replicas=2, idempotent acks=all producers and
// position-keeping consumers all along, the steps of a fault schedule (nemesis.hpp), and at the
// end the checks: liveness after the last heal, then every partition's history (history_check.hpp)
// against a final read, the consumers' reads and every replica's log on disk, and the
// min.insync.replicas windows.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tests/safety/fault_schedule.hpp"
#include "tests/support/history_check.hpp"

namespace capstan::safety {

struct run_options {
  std::string binary;
  fault_schedule schedule;
  // No new step starts after this many seconds.
  int duration_s = 120;
  int topics = 2;
  int partitions = 3;
  int producers = 2;
  // Per topic.
  int consumers = 1;
  // Each producer sends one record per this many microseconds.
  int pause_us = 4000;
  // On the first anomaly of a step, report and exit at once (what a known-defect entry wants),
  // instead of going on to the final checks.
  bool fail_fast = false;
  // When not empty and an anomaly was found: the nodes' logs are copied here before the cluster's
  // directory goes.
  std::string logs_dir;
};

struct run_result {
  fault_schedule schedule;
  size_t steps_run = 0;
  std::map<fault_kind, int> faults_by_kind;
  int64_t sent = 0;
  int64_t acknowledged = 0;
  int64_t failed = 0;
  std::vector<test::anomaly> anomalies;
  std::vector<std::string> events;
  double seconds = 0;
};

// Runs it. `report` gets the result, at the end or on a fail-fast exit (after which the process
// exits with 1 without unwinding, its nodes killed by pid and its directory removed).
void run_safety(const run_options& o, const std::function<void(const run_result&)>& report);

} // namespace capstan::safety
