// The deterministic simulation of the controller quorum (controller_simulation.hpp): quorum
// members over in-memory disks that tear, get lost and rot, the active controller's decisions,
// and brokers that register, heartbeat with their leaderless replicas' logs, crash (some onto new
// data dirs), append, follow and shrink and expand ISRs, with the Raft and the metadata
// invariants and acknowledged records checked after every step and liveness (every partition led
// by a full ISR) once faults stop.
//
// More seeds on demand: CAPSTAN_CONTROLLER_SEED_SCALE=10 build/tests/unit_tests
// "[controller][simulation]" runs ten times as many per case. Replay one seed, printing every
// step:
//   CAPSTAN_CONTROLLER_SEED=1234 CAPSTAN_CONTROLLER_VOTERS=5 build/tests/unit_tests
//   "[controller-replay]"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <spdlog/spdlog.h>

#include "tests/unit/controller/controller_simulation.hpp"

namespace capstan::controller::test {
namespace {

uint64_t env_u64(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : fallback;
}

// The seed a RAFT_INVARIANT abort happened in.
uint64_t g_seed = 0;
size_t g_voters = 0;

extern "C" void print_seed_on_abort(int) {
  char line[160];
  const int n = std::snprintf(line, sizeof line,
                              "controller simulation aborted: seed %llu, %zu voters (replay: "
                              "CAPSTAN_CONTROLLER_SEED=%llu CAPSTAN_CONTROLLER_VOTERS=%zu)\n",
                              static_cast<unsigned long long>(g_seed), g_voters,
                              static_cast<unsigned long long>(g_seed), g_voters);
  if (n > 0) (void)!::write(STDERR_FILENO, line, static_cast<size_t>(n));
}

// The members log what they recover and refuse; thousands of seeds would bury the report.
class quiet_run {
public:
  quiet_run() : previous_(std::signal(SIGABRT, print_seed_on_abort)), level_(spdlog::get_level()) {
    spdlog::set_level(spdlog::level::off);
  }
  ~quiet_run() {
    spdlog::set_level(level_);
    std::signal(SIGABRT, previous_);
  }
  quiet_run(const quiet_run&) = delete;
  quiet_run& operator=(const quiet_run&) = delete;

private:
  void (*previous_)(int);
  spdlog::level::level_enum level_;
};

std::string failure_report(const controller_sim_options& o, const controller_sim_result& r) {
  return "seed " + std::to_string(o.seed) + " (" + std::to_string(o.voters) +
         " voters) failed at step " + std::to_string(r.step) + ": " + *r.failure +
         "\nreplay (prints every step): CAPSTAN_CONTROLLER_SEED=" + std::to_string(o.seed) +
         " CAPSTAN_CONTROLLER_VOTERS=" + std::to_string(o.voters) +
         " build/tests/unit_tests \"[controller-replay]\"";
}

controller_sim_options options(size_t voters, uint64_t seed) {
  controller_sim_options o;
  o.voters = voters;
  o.brokers = voters + 1;
  o.seed = seed;
  return o;
}

void run_batch(size_t voters, uint64_t first, uint64_t count) {
  quiet_run quiet;
  const uint64_t n = count * std::max<uint64_t>(1, env_u64("CAPSTAN_CONTROLLER_SEED_SCALE", 1));
  controller_sim_stats total;
  for (uint64_t seed = first; seed < first + n; ++seed) {
    const auto o = options(voters, seed);
    g_seed = seed;
    g_voters = voters;
    const auto r = run_controller_simulation(o);
    if (r.failure) FAIL(failure_report(o, r));
    total.steps += r.stats.steps;
    total.voter_crashes += r.stats.voter_crashes;
    total.torn_writes += r.stats.torn_writes;
    total.disks_lost += r.stats.disks_lost;
    total.activations += r.stats.activations;
    total.registrations += r.stats.registrations;
    total.fencings += r.stats.fencings;
    total.isr_changes += r.stats.isr_changes;
    total.recoveries += r.stats.recoveries;
    total.acknowledged += r.stats.acknowledged;
    total.topics += r.stats.topics;
    total.snapshots_loaded += r.stats.snapshots_loaded;
    total.entries_applied += r.stats.entries_applied;
    total.liveness_steps = std::max(total.liveness_steps, r.stats.liveness_steps);
    total.waiting_for_operator += r.stats.waiting_for_operator;
  }
  // The batch exercised what it claims to.
  INFO("steps " << total.steps << ", crashes " << total.voter_crashes << ", torn writes "
                << total.torn_writes << ", disks lost or damaged " << total.disks_lost
                << ", activations " << total.activations << ", registrations "
                << total.registrations << ", fencings " << total.fencings << ", ISR changes "
                << total.isr_changes << ", recoveries " << total.recoveries
                << ", records acknowledged " << total.acknowledged << ", topics " << total.topics
                << ", snapshots loaded " << total.snapshots_loaded << ", longest liveness phase "
                << total.liveness_steps << ", partitions waiting for an operator "
                << total.waiting_for_operator);
  CHECK(total.torn_writes > 0);
  CHECK(total.disks_lost > 0);
  CHECK(total.activations > n);
  CHECK(total.registrations > n);
  CHECK(total.fencings > 0);
  CHECK(total.isr_changes > 0);
  CHECK(total.recoveries > 0);
  CHECK(total.acknowledged > 0);
  CHECK(total.topics > n);
  CHECK(total.snapshots_loaded > 0);
}

} // namespace

TEST_CASE("controller simulation: 3 voters, seeds 0-999", "[controller][simulation]") {
  run_batch(3, 0, 1000);
}
TEST_CASE("controller simulation: 5 voters, seeds 0-999", "[controller][simulation]") {
  run_batch(5, 0, 1000);
}

TEST_CASE("a controller simulation seed replays step for step", "[controller][simulation]") {
  quiet_run quiet;
  const auto o = options(3, 41);
  const auto a = run_controller_simulation(o);
  const auto b = run_controller_simulation(o);
  REQUIRE_FALSE(a.failure);
  CHECK(a.step == b.step);
  CHECK(a.fingerprint == b.fingerprint);
  CHECK(a.stats.entries_applied == b.stats.entries_applied);
}

TEST_CASE("replay one controller simulation seed", "[.][controller-replay]") {
  auto o = options(env_u64("CAPSTAN_CONTROLLER_VOTERS", 3), env_u64("CAPSTAN_CONTROLLER_SEED", 0));
  o.trace = true;
  g_seed = o.seed;
  g_voters = o.voters;
  const auto r = run_controller_simulation(o);
  if (r.failure) FAIL(failure_report(o, r));
  SUCCEED("seed " << o.seed << " passed in " << r.step << " steps");
}

} // namespace capstan::controller::test
