// The deterministic simulation of the Raft core (raft_simulation.hpp): thousands of seeds of 3-
// and 5-node quorums under loss, duplication, reordering, partitions, crashes, torn persists,
// lost and damaged disks and leadership transfers, with every safety invariant checked after
// every step and liveness checked once faults stop.
//
// More seeds on demand: CAPSTAN_RAFT_SEED_SCALE=10 build/tests/unit_tests "[simulation]"
// runs ten times as many per case. Replay one seed, printing every step:
//   CAPSTAN_RAFT_SEED=1234 CAPSTAN_RAFT_NODES=5 build/tests/unit_tests "[replay]"
// (with CAPSTAN_RAFT_VOTER_CHANGES=1 for a seed of the voter-change batches)

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "tests/unit/controller/raft/raft_simulation.hpp"

namespace capstan::raft::test {
namespace {

uint64_t env_u64(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : fallback;
}

// A RAFT_INVARIANT inside the core aborts the process: say which seed and step did it.
extern "C" void print_position_on_abort(int) {
  const auto& p = current_sim_position();
  char line[160];
  const int n = std::snprintf(line, sizeof line,
                              "raft simulation aborted: seed %llu, %zu nodes, step %zu "
                              "(replay: CAPSTAN_RAFT_SEED=%llu CAPSTAN_RAFT_NODES=%zu)\n",
                              static_cast<unsigned long long>(p.seed), p.nodes, p.step,
                              static_cast<unsigned long long>(p.seed), p.nodes);
  if (n > 0) (void)!::write(STDERR_FILENO, line, static_cast<size_t>(n));
}

class abort_reporter {
public:
  abort_reporter() : previous_(std::signal(SIGABRT, print_position_on_abort)) {}
  ~abort_reporter() { std::signal(SIGABRT, previous_); }
  abort_reporter(const abort_reporter&) = delete;
  abort_reporter& operator=(const abort_reporter&) = delete;

private:
  void (*previous_)(int);
};

std::string failure_report(const sim_options& o, const sim_result& r) {
  return "seed " + std::to_string(o.seed) + " (" + std::to_string(o.nodes) +
         " nodes) failed at step " + std::to_string(r.step) + ": " + *r.failure +
         "\nreplay (prints every step): CAPSTAN_RAFT_SEED=" + std::to_string(o.seed) +
         " CAPSTAN_RAFT_NODES=" + std::to_string(o.nodes) +
         (o.voter_changes ? " CAPSTAN_RAFT_VOTER_CHANGES=1" : "") +
         " build/tests/unit_tests \"[replay]\"";
}

// Runs `count` seeds from `first` (times CAPSTAN_RAFT_SEED_SCALE) and fails on the first bad one.
void run_batch(size_t nodes, uint64_t first, uint64_t count, bool voter_changes = false) {
  abort_reporter reporter;
  const uint64_t n = count * std::max<uint64_t>(1, env_u64("CAPSTAN_RAFT_SEED_SCALE", 1));
  sim_stats total;
  for (uint64_t seed = first; seed < first + n; ++seed) {
    sim_options o;
    o.nodes = nodes;
    o.seed = seed;
    o.voter_changes = voter_changes;
    const auto r = run_simulation(o);
    if (r.failure) FAIL(failure_report(o, r));
    total.steps += r.stats.steps;
    total.crashes += r.stats.crashes;
    total.leaders += r.stats.leaders;
    total.committed += r.stats.committed;
    total.snapshots_installed += r.stats.snapshots_installed;
    total.transfer_votes += r.stats.transfer_votes;
    total.disks_lost += r.stats.disks_lost;
    total.voters_added += r.stats.voters_added;
    total.voters_removed += r.stats.voters_removed;
    total.liveness_steps = std::max(total.liveness_steps, r.stats.liveness_steps);
  }
  // The batch exercised what it claims to (every batch of this size does, by a wide margin).
  INFO("steps " << total.steps << ", longest liveness phase " << total.liveness_steps);
  CHECK(total.crashes > n);
  CHECK(total.snapshots_installed > 0);
  CHECK(total.leaders > n);
  CHECK(total.committed > 10 * n);
  CHECK(total.transfer_votes > 0);
  if (voter_changes) {
    CHECK(total.voters_added > n / 20);
    CHECK(total.voters_removed > n / 20);
  } else {
    CHECK(total.disks_lost > 0);
  }
}

} // namespace

TEST_CASE("raft simulation: 3 nodes, seeds 0-999", "[raft][simulation]") {
  run_batch(3, 0, 1000);
}
TEST_CASE("raft simulation: 3 nodes, seeds 1000-1999", "[raft][simulation]") {
  run_batch(3, 1000, 1000);
}
TEST_CASE("raft simulation: 3 nodes, seeds 2000-2999", "[raft][simulation]") {
  run_batch(3, 2000, 1000);
}
TEST_CASE("raft simulation: 5 nodes, seeds 0-999", "[raft][simulation]") {
  run_batch(5, 0, 1000);
}
TEST_CASE("raft simulation: 5 nodes, seeds 1000-1999", "[raft][simulation]") {
  run_batch(5, 1000, 1000);
}
TEST_CASE("raft simulation: 5 nodes, seeds 2000-2999", "[raft][simulation]") {
  run_batch(5, 2000, 1000);
}

TEST_CASE("raft simulation with voter changes: 3 nodes and a spare, seeds 0-999",
          "[raft][simulation]") {
  run_batch(3, 0, 1000, true);
}
TEST_CASE("raft simulation with voter changes: 5 nodes and a spare, seeds 0-999",
          "[raft][simulation]") {
  run_batch(5, 0, 1000, true);
}

TEST_CASE("a simulation seed replays step for step", "[raft][simulation]") {
  sim_options o;
  o.nodes = 5;
  o.seed = 77;
  const auto a = run_simulation(o);
  const auto b = run_simulation(o);
  REQUIRE_FALSE(a.failure);
  CHECK(a.step == b.step);
  CHECK(a.fingerprint == b.fingerprint);
  CHECK(a.stats.committed == b.stats.committed);
}

TEST_CASE("the simulation catches a driver that sends before it persists", "[raft][simulation]") {
  abort_reporter reporter;
  size_t caught = 0;
  std::string example;
  for (uint64_t seed = 0; seed < 200 && caught == 0; ++seed) {
    sim_options o;
    o.nodes = 3;
    o.seed = seed;
    o.send_before_persist = true;
    const auto r = run_simulation(o);
    if (r.failure) {
      ++caught;
      example = *r.failure;
    }
  }
  INFO(example);
  CHECK(caught > 0);
}

TEST_CASE("replay one raft simulation seed", "[.][replay]") {
  abort_reporter reporter;
  sim_options o;
  o.seed = env_u64("CAPSTAN_RAFT_SEED", 0);
  o.nodes = env_u64("CAPSTAN_RAFT_NODES", 3);
  o.voter_changes = env_u64("CAPSTAN_RAFT_VOTER_CHANGES", 0) != 0;
  o.trace = true;
  const auto r = run_simulation(o);
  if (r.failure) FAIL(failure_report(o, r));
  SUCCEED("seed " << o.seed << " passed in " << r.step << " steps");
}

} // namespace capstan::raft::test
