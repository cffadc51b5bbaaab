#include <catch2/catch.hpp>

#include <string>

#include "actors/node/controller_quorum.hpp"
#include "actors/node/node.hpp"

using namespace capstan;

namespace {

// The error message of a quorum that must be refused (INVALID_CONFIG), or "" if it was taken.
std::string refusal(const std::string& text) {
  auto v = parse_controller_quorum(text);
  if (v) return "";
  CHECK(v.code() == errc::invalid_config);
  return v.err().message;
}

} // namespace

TEST_CASE("a controller quorum is read as its voters in the order given",
          "[node][config][quorum]") {
  auto v = parse_controller_quorum("1@127.0.0.1:19093,2@localhost:19193,3@[::1]:19293");
  INFO((v ? std::string() : v.err().to_string()));
  REQUIRE(v);
  REQUIRE(v->size() == 3);
  CHECK((*v)[0].id == 1);
  CHECK((*v)[0].address.host == "127.0.0.1");
  CHECK((*v)[0].address.port == 19093);
  CHECK((*v)[1].id == 2);
  CHECK((*v)[1].address.host == "localhost");
  CHECK((*v)[2].id == 3);
  CHECK((*v)[2].address.port == 19293);
}

TEST_CASE("a malformed controller quorum is refused naming what is wrong",
          "[node][config][quorum]") {
  CHECK_THAT(refusal(""), Catch::Contains("no voters"));
  CHECK_THAT(refusal("1@127.0.0.1:1,,2@127.0.0.1:2"), Catch::Contains("an empty entry"));
  CHECK_THAT(refusal("1@127.0.0.1:1,"), Catch::Contains("an empty entry"));
  CHECK_THAT(refusal("127.0.0.1:19093"), Catch::Contains("is not ID@HOST:PORT"));
  CHECK_THAT(refusal("x@127.0.0.1:1"), Catch::Contains("'x' in 'x@127.0.0.1:1' is not a node id"));
  CHECK_THAT(refusal("-1@127.0.0.1:1"), Catch::Contains("is not a node id"));
  CHECK_THAT(refusal("1@127.0.0.1"), Catch::Contains("voter 1"));
  CHECK_THAT(refusal("1@127.0.0.1:70000"), Catch::Contains("voter 1"));
  CHECK_THAT(refusal("1@127.0.0.1:0"), Catch::Contains("voter 1 needs a port other than 0"));
  CHECK_THAT(refusal("1@127.0.0.1:1,2@127.0.0.1:2,1@127.0.0.1:3"),
             Catch::Contains("voter 1 is given twice"));
  CHECK_THAT(refusal("1@127.0.0.1:1,2@127.0.0.1:2,3@127.0.0.1:1"),
             Catch::Contains("voters 1 and 3 are both given 127.0.0.1:1"));
}

TEST_CASE("the controller quorum keys take Kafka's names and defaults", "[node][config][quorum]") {
  const node_config defaults;
  CHECK(defaults.broker_heartbeat_interval_ms == 2000);
  CHECK(defaults.broker_session_timeout_ms == 9000);
  CHECK(defaults.controller_quorum_election_timeout_ms == 1000);
  auto c = node_config::from_toml(R"(
controller.quorum.voters = "1@127.0.0.1:19093,2@127.0.0.1:19193"
cluster.id = "abc"
broker.heartbeat.interval.ms = 100
broker.session.timeout.ms = 1500
controller.quorum.election.timeout.ms = 300
)",
                                  "test.toml", {});
  INFO((c ? std::string() : c.err().to_string()));
  REQUIRE(c);
  CHECK(c->controller_quorum == "1@127.0.0.1:19093,2@127.0.0.1:19193");
  CHECK(c->cluster_id == "abc");
  CHECK(c->broker_heartbeat_interval_ms == 100);
  CHECK(c->broker_session_timeout_ms == 1500);
  CHECK(c->controller_quorum_election_timeout_ms == 300);
}

TEST_CASE("a config file's bad controller quorum or heartbeat longer than the session is refused",
          "[node][config][quorum]") {
  auto dup = node_config::from_toml("controller.quorum.voters = \"1@h:1,1@h:2\"\n", "a.toml", {});
  REQUIRE_FALSE(dup);
  CHECK(dup.code() == errc::invalid_config);
  CHECK_THAT(dup.err().message, Catch::Contains("a.toml: controller.quorum.voters:") &&
                                    Catch::Contains("voter 1 is given twice"));
  auto slow = node_config::from_toml(
      "broker.heartbeat.interval.ms = 9000\nbroker.session.timeout.ms = 9000\n", "b.toml", {});
  REQUIRE_FALSE(slow);
  CHECK(slow.code() == errc::invalid_config);
  CHECK_THAT(slow.err().message,
             Catch::Contains("broker.heartbeat.interval.ms (9000) must be less than "
                             "broker.session.timeout.ms (9000)"));
  auto zero = node_config::from_toml("controller.quorum.election.timeout.ms = 0\n", "c.toml", {});
  REQUIRE_FALSE(zero);
  CHECK_THAT(zero.err().message, Catch::Contains("controller.quorum.election.timeout.ms"));
}

TEST_CASE("process.roles takes broker with or without controller and refuses anything else",
          "[node][config][quorum]") {
  auto broker = parse_process_roles("broker");
  REQUIRE(broker);
  CHECK_FALSE(*broker);
  for (const char* both : {"broker,controller", "controller,broker", "broker, controller"}) {
    auto roles = parse_process_roles(both);
    REQUIRE(roles);
    CHECK(*roles);
  }
  for (const char* bad : {"", "controller", "broker,broker", "broker,", "broker,gateway"}) {
    auto roles = parse_process_roles(bad);
    INFO(bad);
    REQUIRE_FALSE(roles);
    CHECK(roles.code() == errc::invalid_config);
    CHECK_THAT(roles.err().message, Catch::Contains("process.roles"));
  }
  auto from_file =
      node_config::from_toml("process.roles = [\"broker\", \"controller\"]\n", "r.toml", {});
  REQUIRE(from_file);
  CHECK(from_file->process_roles == "broker,controller");
  auto no_broker = node_config::from_toml("process.roles = \"controller\"\n", "s.toml", {});
  REQUIRE_FALSE(no_broker);
  CHECK_THAT(no_broker.err().message,
             Catch::Contains("s.toml") && Catch::Contains("every capstan node is a broker"));
}
