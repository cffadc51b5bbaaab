#include "tests/support/caf_fixture.hpp"

#include <caf/atom.hpp>
#include <caf/exit_reason.hpp>

namespace capstan::test {

namespace {

// Bounds for the destructor's clean-up: enough for any sane test, finite for a broken one.
constexpr size_t max_jobs_per_drain = 1'000'000;
constexpr size_t max_cleanup_rounds = 10'000;
constexpr size_t max_timeouts_per_advance = 1'000'000;

actor_config_options fixture_options(std::vector<type_registrar> extra_types) {
  actor_config_options options;
  options.load_middleman = false;
  options.extra_types = std::move(extra_types);
  return options;
}

} // namespace

caf_fixture::caf_fixture(std::vector<type_registrar> extra_types)
  : cfg_(fixture_options(std::move(extra_types))),
    sys_(testing_config(cfg_)),
    sched_(dynamic_cast<caf::scheduler::test_coordinator&>(sys_.scheduler())) {}

caf_fixture::~caf_fixture() {
  drain(max_jobs_per_drain);
  for (const auto& addr : tracked_)
    caf::anon_send_exit(addr, caf::exit_reason::kill);
  for (size_t round = 0; round < max_cleanup_rounds; ++round) {
    drain(max_jobs_per_drain);
    if (!sched_.trigger_timeout() && !sched_.has_job())
      break;
  }
}

caf::actor_system_config& caf_fixture::testing_config(actor_config& cfg) {
  cfg.set("scheduler.policy", caf::atom("testing"));
  return cfg;
}

size_t caf_fixture::drain(size_t limit) {
  return sched_.run(limit);
}

bool caf_fixture::run_once() {
  return sched_.try_run_once();
}

size_t caf_fixture::run() {
  return drain(max_jobs_per_drain);
}

size_t caf_fixture::run_with_timers(size_t max_timeouts) {
  size_t events = run();
  for (size_t fired = 0; fired < max_timeouts && sched_.trigger_timeout(); ++fired)
    events += 1 + run();
  return events;
}

size_t caf_fixture::advance_time(caf::timespan d) {
  auto& clock = sched_.clock();
  auto target = clock.current_time + d;
  run();
  // One timer at a time, in time order, draining in between: a timer re-armed by its handler
  // fires again within the same advance if its next time point is still due, as with a real clock.
  size_t fired = 0;
  while (fired < max_timeouts_per_advance && !clock.schedule().empty()
         && clock.schedule().begin()->first <= target && sched_.trigger_timeout()) {
    ++fired;
    run();
  }
  if (clock.current_time < target)
    clock.current_time = target;
  return fired;
}

threaded_system::threaded_system(actor_config_options options)
  : cfg_(options), sys_(cfg_) {}

threaded_system::~threaded_system() {
  for (const auto& addr : tracked_)
    caf::anon_send_exit(addr, caf::exit_reason::kill);
}

} // namespace capstan::test
