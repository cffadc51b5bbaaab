// The deterministic fixture: simulated time, jobs run only when the test says so, and a failed
// test cannot hang the actor system.

#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>

#include <caf/atom.hpp>
#include <caf/behavior.hpp>
#include <caf/stateful_actor.hpp>
#include <catch2/catch.hpp>

#include "tests/support/caf_fixture.hpp"

namespace capstan {
namespace {

using namespace std::chrono_literals;

using tick_atom = caf::atom_constant<caf::atom("tick")>;
using get_atom = caf::atom_constant<caf::atom("get")>;
using add_atom = caf::atom_constant<caf::atom("add")>;

// Counts ticks of a 100 ms timer and the values added to it.
struct ticker_state {
  int ticks = 0;
  int sum = 0;
  static inline const char* name = "ticker";
};

caf::behavior ticker(caf::stateful_actor<ticker_state>* self) {
  self->delayed_send(self, 100ms, tick_atom::value);
  return {
    [self](tick_atom) {
      ++self->state.ticks;
      self->delayed_send(self, 100ms, tick_atom::value);
    },
    [self](add_atom, int x) { self->state.sum += x; },
    [self](get_atom) { return self->state.ticks; },
  };
}

// Never answers: the request stays pending until its timeout.
caf::behavior silent(caf::event_based_actor*) {
  return {[](get_atom) -> caf::result<int> { return caf::delegated<int>{}; }};
}

} // namespace

TEST_CASE_METHOD(test::caf_fixture, "the fixture drives a timer actor by simulated time only",
                 "[actor][caf_fixture]") {
  auto t = spawn(ticker);
  run();
  auto& state = deref<caf::stateful_actor<ticker_state>>(t).state;
  CHECK(state.ticks == 0);

  CHECK(advance_time(99ms) == 0);
  CHECK(state.ticks == 0);
  CHECK(advance_time(1ms) == 1);
  CHECK(state.ticks == 1);
  // A re-armed timer fires at each 100 ms point inside one advance.
  CHECK(advance_time(250ms) == 2);
  CHECK(state.ticks == 3);

  auto ticks = request<int>(t, get_atom::value);
  REQUIRE(ticks);
  CHECK(*ticks == 3);
}

TEST_CASE_METHOD(test::caf_fixture, "messages wait in the mailbox until the test runs jobs",
                 "[actor][caf_fixture]") {
  auto t = spawn(ticker);
  run();
  caf::anon_send(t, add_atom::value, 5);
  caf::anon_send(t, add_atom::value, 6);
  auto& state = deref<caf::stateful_actor<ticker_state>>(t).state;
  CHECK(state.sum == 0);
  CHECK(run_once());
  CHECK(state.sum == 5);
  CHECK(run() == 1);
  CHECK(state.sum == 11);
  CHECK_FALSE(run_once());
}

TEST_CASE_METHOD(test::caf_fixture, "a request nobody answers reports a timeout, not a hang",
                 "[actor][caf_fixture]") {
  auto s = spawn(silent);
  auto reply = request<int>(s, get_atom::value);
  REQUIRE_FALSE(reply);
  CHECK(reply.error() == caf::sec::request_timeout);
}

TEST_CASE("a fixture torn down by an exception does not hang", "[actor][caf_fixture]") {
  // A live periodic timer, a pending request and an unrun message: all that a failed REQUIRE
  // can leave behind.
  auto fails = [] {
    test::caf_fixture f;
    auto t = f.spawn(ticker);
    auto s = f.spawn(silent);
    f.run();
    f.advance_time(150ms);
    (void) f.request<int>(s, get_atom::value);
    caf::anon_send(t, add_atom::value, 1);
    throw std::runtime_error("simulated failed REQUIRE");
  };
  CHECK_THROWS_AS(fails(), std::runtime_error);
}

TEST_CASE("run_with_timers stops on a self-re-arming timer", "[actor][caf_fixture]") {
  test::caf_fixture f;
  auto t = f.spawn(ticker);
  CHECK(f.run_with_timers(10) > 10);
  CHECK(f.deref<caf::stateful_actor<ticker_state>>(t).state.ticks == 10);
}

} // namespace capstan
