// A node's registration rules: whom it asks, when it registers again, and how long it waits.

#include <catch2/catch.hpp>

#include "actors/controller/broker_lifecycle.hpp"

using namespace capstan;
using namespace std::chrono_literals;

namespace {

broker_lifecycle make() {
  return broker_lifecycle({node_id{1}, node_id{2}, node_id{3}},
                          broker_lifecycle_timing{2000ms, 100ms, 400ms});
}

} // namespace

TEST_CASE("a node registers, heartbeats at once, then every interval", "[controller][lifecycle]") {
  auto l = make();
  CHECK(l.registering());
  CHECK(l.target() == node_id{1});
  CHECK(l.registered({errc::none, {}, 7, 1}) == 0ms);
  CHECK_FALSE(l.registering());
  CHECK(l.epoch() == 7);
  CHECK(l.fenced());
  CHECK(l.heartbeated({errc::none, {}, false, 1}) == 2000ms);
  CHECK_FALSE(l.fenced());
}

TEST_CASE("a node follows leader hints, tries the next voter with a bounded backoff, and keeps its "
          "registration across controllers",
          "[controller][lifecycle]") {
  auto l = make();
  CHECK(l.registered({errc::not_controller, {}, -1, 3}) == 100ms);
  CHECK(l.target() == node_id{3});
  REQUIRE(l.registered({errc::none, {}, 4, 3}) == 0ms);
  // The controller went away: the next voters, waiting longer each time, never past the maximum.
  CHECK(l.failed() == 100ms);
  CHECK(l.target() == node_id{2});
  CHECK(l.failed() == 200ms);
  CHECK(l.failed() == 400ms);
  CHECK(l.failed() == 400ms);
  CHECK_FALSE(l.registering());
  CHECK(l.heartbeated({errc::none, {}, false, 2}) == 2000ms);
  CHECK(l.epoch() == 4);
}

TEST_CASE("a node registers again when its broker epoch is stale", "[controller][lifecycle]") {
  auto l = make();
  REQUIRE(l.registered({errc::none, {}, 4, 1}) == 0ms);
  (void)l.heartbeated({errc::stale_broker_epoch, "gone", true, 1});
  CHECK(l.registering());
  CHECK(l.epoch() == -1);
}

TEST_CASE("a node looking for the controller never waits longer than its heartbeat interval",
          "[controller][lifecycle]") {
  // A backoff allowed up to 2 s with heartbeats every 300 ms: a new active controller could let
  // the node's session run out while it waits.
  broker_lifecycle l({node_id{1}, node_id{2}, node_id{3}},
                     broker_lifecycle_timing{300ms, 100ms, 2000ms});
  REQUIRE(l.registered({errc::none, {}, 4, 1}) == 0ms);
  CHECK(l.failed() == 100ms);
  CHECK(l.failed() == 200ms);
  CHECK(l.failed() == 300ms);
  CHECK(l.failed() == 300ms);
  CHECK(l.registered({errc::duplicate_broker_registration, {}, -1, -1}) == 300ms);
}
