// Broker sessions: a node whose last heartbeat is broker.session.timeout.ms old has expired.

#include <catch2/catch.hpp>

#include "actors/controller/metadata/broker_sessions.hpp"
#include "tests/unit/controller/metadata/image_builder.hpp"

using namespace capstan;
using namespace capstan::controller;
using namespace capstan::controller::test;

TEST_CASE("a session expires a session timeout after the last heartbeat", "[controller][sessions]") {
  broker_sessions sessions;
  CHECK(sessions.session_timeout_ms() == 9000);
  CHECK(default_broker_heartbeat_interval_ms == 2000);
  sessions.heartbeat(node_id{1}, 1000);
  sessions.heartbeat(node_id{2}, 5000);
  CHECK(sessions.alive(node_id{1}, 9999));
  CHECK_FALSE(sessions.alive(node_id{1}, 10000));
  CHECK(sessions.expired(9999).empty());
  CHECK(sessions.expired(10000) == ids({1}));
  CHECK(sessions.expired(14000) == ids({1, 2}));
  CHECK_FALSE(sessions.alive(node_id{3}, 0)); // never heard of

  sessions.heartbeat(node_id{1}, 12000);
  CHECK(sessions.expired(14000) == ids({2}));
  sessions.remove(node_id{2});
  CHECK(sessions.expired(14000).empty());
}

TEST_CASE("a late heartbeat never shortens a session", "[controller][sessions]") {
  broker_sessions sessions(100);
  sessions.heartbeat(node_id{1}, 500);
  sessions.heartbeat(node_id{1}, 450);
  CHECK(sessions.alive(node_id{1}, 599));
}

TEST_CASE("a newly active controller starts every registered node's session",
          "[controller][sessions]") {
  broker_sessions sessions(100);
  sessions.heartbeat(node_id{2}, 900);
  sessions.start_all(ids({1, 2, 3}), 800);
  CHECK(sessions.expired(900) == ids({1, 3}));
  CHECK(sessions.alive(node_id{2}, 950));
}

TEST_CASE("a node is heard from once it heartbeats, not when activation presumes it alive",
          "[controller][sessions]") {
  broker_sessions sessions(100);
  sessions.heartbeat(node_id{2}, 700);
  sessions.start_all(ids({1, 2}), 800);
  CHECK_FALSE(sessions.heard_from(node_id{1}));
  CHECK(sessions.heard_from(node_id{2}));
  CHECK_FALSE(sessions.heard_from(node_id{3}));
  // start_all still renews the older session.
  CHECK(sessions.alive(node_id{2}, 850));
  sessions.heartbeat(node_id{1}, 820);
  CHECK(sessions.heard_from(node_id{1}));
  sessions.remove(node_id{1});
  CHECK_FALSE(sessions.heard_from(node_id{1}));
}

TEST_CASE("a lost connection ends a session at once, and only a node heard again renews it",
          "[controller][sessions]") {
  broker_sessions sessions(9000);
  sessions.heartbeat(node_id{1}, 1000);
  sessions.heartbeat(node_id{2}, 1000);
  sessions.connection_lost(node_id{1});
  CHECK(sessions.lost(node_id{1}));
  CHECK_FALSE(sessions.alive(node_id{1}, 1001));
  CHECK(sessions.alive(node_id{2}, 1001));
  CHECK(sessions.expired(1001) == ids({1}));
  // A heartbeat decided after the loss renews nothing, even once the expiry was reported.
  sessions.heartbeat(node_id{1}, 1002);
  CHECK(sessions.expired(1002) == ids({1}));
  sessions.remove(node_id{1});
  sessions.heartbeat(node_id{1}, 1003);
  CHECK_FALSE(sessions.alive(node_id{1}, 1003));

  sessions.heard_again(node_id{1});
  CHECK_FALSE(sessions.lost(node_id{1}));
  sessions.heartbeat(node_id{1}, 1004);
  CHECK(sessions.alive(node_id{1}, 1004));
  CHECK(sessions.expired(1004).empty());
}
