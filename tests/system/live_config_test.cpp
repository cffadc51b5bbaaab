// Topic configs changed while a cluster of real `capstan node` processes runs (three voters,
// tests/support/node_cluster) reach the replicas that are already open, as Kafka applies an
// alter-config to its live logs: min.insync.replicas raised to 3 on an RF=3 topic refuses acks=all
// writes once a follower is gone, and lowered again, or its override deleted, takes them.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tests/support/eventually.hpp"
#include "tests/support/node_cluster.hpp"

using namespace capstan;
using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

const std::string binary = CAPSTAN_BINARY;

} // namespace

TEST_CASE("min.insync.replicas raised live on an RF=3 topic refuses acks=all writes once a "
          "follower is killed, and lowered or deleted live takes them again",
          "[system][cluster][config]") {
  node_cluster c(binary, 0);
  c.create_topic("guarded", 3, c.node(1));
  const int leader = c.await_full_isr("guarded", c.node(1)).leader;
  auto& via = c.node(leader);
  std::string out, err;
  const auto produce = [&](const std::string& line) {
    return c.cli(line + "\n", {"produce", "guarded", "--acks", "all", "--delivery-timeout-ms", "3000"},
                 via, &out, &err);
  };
  const auto alter = [&](const std::string& flag, const std::string& setting) {
    const int code = c.cli("", {"topic", "alter-config", "guarded", flag, setting}, via, &out, &err);
    INFO(err);
    REQUIRE(code == 0);
  };
  REQUIRE(produce("before") == 0);

  alter("--config", "min.insync.replicas=3");
  const int follower = leader % 3 + 1;
  c.node(follower).kill();
  std::vector<int> left;
  for (int id = 1; id <= 3; ++id)
    if (id != follower) left.push_back(id);
  REQUIRE(c.await_isr("guarded", via, left) == leader);

  // The leader judges acks=all by the raised setting: the ISR of two is too small.
  CHECK(produce("refused") != 0);
  INFO(err);
  CHECK(err.find("NOT_ENOUGH_REPLICAS") != std::string::npos);

  alter("--config", "min.insync.replicas=2");
  const bool taken = eventually([&] { return produce("after") == 0; }, 30s);
  INFO(err);
  REQUIRE(taken);

  // Raised again, then the override deleted: the node's default (1) applies to the open replicas.
  alter("--config", "min.insync.replicas=3");
  REQUIRE(eventually([&] { return produce("refused") != 0; }, 30s));
  alter("--delete-config", "min.insync.replicas");
  const bool taken_again = eventually([&] { return produce("default") == 0; }, 30s);
  INFO(err);
  REQUIRE(taken_again);
  CHECK(c.consume("guarded", via, 3) == std::vector<std::string>{"before", "after", "default"});
  REQUIRE(c.cli("", {"topic", "describe", "guarded"}, via, &out, &err) == 0);
  // No longer an override: the node default, among the defaults.
  CHECK(out.find("\tConfigs: \tDefaults: ") != std::string::npos);
  CHECK(out.find("min.insync.replicas=1") != std::string::npos);
}
