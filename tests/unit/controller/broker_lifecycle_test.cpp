// A node's registration rules: whom it asks, when it registers again, and how long it waits.

#include <catch2/catch.hpp>

#include "actors/controller/broker_lifecycle.hpp"

using namespace capstan;
using namespace std::chrono_literals;

namespace {

const auto t0 = std::chrono::steady_clock::time_point{} + 1h;

broker_lifecycle make() {
  return broker_lifecycle({node_id{1}, node_id{2}, node_id{3}},
                          broker_lifecycle_timing{2000ms, 100ms, 400ms});
}

} // namespace

TEST_CASE("a node registers, heartbeats at once, then every interval", "[controller][lifecycle]") {
  auto l = make();
  CHECK(l.registering());
  CHECK(l.target() == node_id{1});
  CHECK(l.registered({errc::none, {}, 7, 1}, t0) == 0ms);
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
  CHECK(l.registered({errc::not_controller, {}, -1, 3}, t0) == 100ms);
  CHECK(l.target() == node_id{3});
  REQUIRE(l.registered({errc::none, {}, 4, 3}, t0) == 0ms);
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
  REQUIRE(l.registered({errc::none, {}, 4, 1}, t0) == 0ms);
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
  REQUIRE(l.registered({errc::none, {}, 4, 1}, t0) == 0ms);
  CHECK(l.failed() == 100ms);
  CHECK(l.failed() == 200ms);
  CHECK(l.failed() == 300ms);
  CHECK(l.failed() == 300ms);
  CHECK(l.registered({errc::duplicate_broker_registration, {}, -1, -1}, t0) == 300ms);
}

TEST_CASE("a refusal for good: another cluster at once, a duplicate node id once it outlasts any "
          "session",
          "[controller][lifecycle]") {
  SECTION("INCONSISTENT_CLUSTER_ID") {
    auto l = make();
    (void)l.registered({errc::not_controller, {}, -1, 2}, t0);
    CHECK_FALSE(l.refusal());
    (void)l.registered({errc::inconsistent_cluster_id, "expected cluster id 'a'", -1, 2}, t0);
    REQUIRE(l.refusal());
    CHECK(l.refusal()->code == errc::inconsistent_cluster_id);
    CHECK(l.refusal()->message.find("expected cluster id 'a'") != std::string::npos);
  }
  SECTION("DUPLICATE_BROKER_REGISTRATION") {
    broker_lifecycle l({node_id{1}, node_id{2}, node_id{3}},
                       broker_lifecycle_timing{2000ms, 100ms, 400ms, 6000ms});
    const broker_registration_response_msg dup{errc::duplicate_broker_registration, "twin", -1, 1};
    (void)l.registered(dup, t0);
    (void)l.registered(dup, t0 + 5999ms);
    CHECK_FALSE(l.refusal());
    // A controller change in between does not make the refusals any less continuous.
    (void)l.registered({errc::not_controller, {}, -1, 2}, t0 + 6000ms);
    (void)l.registered(dup, t0 + 6000ms);
    REQUIRE(l.refusal());
    CHECK(l.refusal()->code == errc::duplicate_broker_registration);
    CHECK(l.refusal()->message.find("another process with this node id is running") !=
          std::string::npos);
  }
  SECTION("a duplicate that ends (the old session ran out) starts the count again") {
    broker_lifecycle l({node_id{1}, node_id{2}, node_id{3}},
                       broker_lifecycle_timing{2000ms, 100ms, 400ms, 6000ms});
    const broker_registration_response_msg dup{errc::duplicate_broker_registration, "twin", -1, 1};
    (void)l.registered(dup, t0);
    REQUIRE(l.registered({errc::none, {}, 5, 1}, t0 + 5000ms) == 0ms);
    (void)l.heartbeated({errc::stale_broker_epoch, "gone", true, 1});
    (void)l.registered(dup, t0 + 7000ms);
    (void)l.registered(dup, t0 + 12000ms);
    CHECK_FALSE(l.refusal());
  }
}

TEST_CASE("no controller can confirm anything once more than half of the voters are gone",
          "[controller][lifecycle]") {
  // A node stopping last in a whole-cluster stop asked the gone voters until its controlled
  // shutdown's window closed.
  broker_lifecycle three({node_id{1}, node_id{2}, node_id{3}}, broker_lifecycle_timing{});
  CHECK_FALSE(three.majority_gone({}));
  CHECK_FALSE(three.majority_gone({node_id{2}}));
  CHECK_FALSE(three.majority_gone({node_id{2}, node_id{7}}));
  CHECK(three.majority_gone({node_id{1}, node_id{2}}));
  broker_lifecycle four({node_id{1}, node_id{2}, node_id{3}, node_id{4}}, broker_lifecycle_timing{});
  CHECK_FALSE(four.majority_gone({node_id{1}, node_id{2}}));
  CHECK(four.majority_gone({node_id{1}, node_id{2}, node_id{4}}));
}
