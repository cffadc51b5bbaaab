// Adding partitions and preferred leader election on a cluster of real `capstan node` processes
// (three voters, node_cluster), through the real CLI. The first case grows an RF=3 topic with
// `topic add-partitions` and produces to and consumes from the new partitions; then it kills a
// partition's preferred leader, restarts it, waits until it is back in the ISR and moves
// leadership back with `cluster elect-leaders` (the periodic rebalance is off there). The second
// case leaves the periodic rebalance on with a one-second interval and sees it do the same.

#include <catch2/catch.hpp>

#include <regex>
#include <string>
#include <vector>

#include "tests/support/eventually.hpp"
#include "tests/support/node_cluster.hpp"

using namespace capstan;
using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

const std::string binary = CAPSTAN_BINARY;

// The partition's preferred replica: the first of its replicas in `topic describe`'s order (the
// node_cluster helpers sort them). 0 when the describe fails.
int preferred_replica(node_cluster& c, const std::string& topic, int partition,
                      const node_process& via) {
  std::string out, err;
  if (c.cli("", {"topic", "describe", topic}, via, &out, &err) != 0) return 0;
  const std::regex row("Partition: " + std::to_string(partition) + R"(\s.*Replicas: (\d+))");
  std::smatch m;
  for (const auto& line : lines_of(out))
    if (std::regex_search(line, m, row)) return std::stoi(m[1]);
  return 0;
}

// Kills the partition's preferred leader, waits until another replica leads, restarts it and
// waits until it is back in the ISR (led by another node still). Returns the preferred replica.
int bounce_preferred_leader(node_cluster& c, const std::string& topic) {
  const int preferred = preferred_replica(c, topic, 0, c.node(1));
  REQUIRE(preferred != 0);
  auto& other = c.node(preferred == 1 ? 2 : 1);
  REQUIRE(c.await_full_isr(topic, other).leader == preferred);
  c.node(preferred).kill();
  c.await_full_isr(topic, other, {preferred});
  c.node(preferred).start();
  c.await_full_isr(topic, other);
  return preferred;
}

} // namespace

TEST_CASE("partitions added to an RF=3 topic take produce and fetch, and elect-leaders moves "
          "leadership back to a restarted preferred replica",
          "[system][cluster][elect]") {
  node_cluster c(binary, 0, "auto.leader.rebalance.enable = false\n");
  std::string out, err;
  c.create_topic("grow", 3, c.node(1));
  c.await_full_isr("grow", c.node(1));

  int code =
      c.cli("", {"topic", "add-partitions", "grow", "--partitions", "3"}, c.node(2), &out, &err);
  INFO(err);
  REQUIRE(code == 0);
  code = c.cli("", {"topic", "add-partitions", "grow", "--partitions", "2"}, c.node(2), &out, &err);
  CHECK(code == 2);
  CHECK(err.find("INVALID_PARTITIONS") != std::string::npos);
  for (int p : {1, 2})
    for (auto& n : c.nodes) CHECK(c.await_full_isr("grow", *n, {}, p).replicas.size() == 3);

  for (int p : {1, 2}) {
    const std::string value = "on-" + std::to_string(p);
    // Through a node whose metadata cache may not list the partition yet: bounded retries.
    bool produced = eventually(
        [&] {
          return c.cli(value + "\n",
                       {"produce", "grow", "--partition", std::to_string(p), "--acks", "all"},
                       c.node(3), &out, &err) == 0;
        },
        30s);
    INFO(err);
    REQUIRE(produced);
    for (auto& n : c.nodes)
      CHECK(c.consume("grow", *n, 1, {"--partition", std::to_string(p)}) ==
            std::vector<std::string>{value});
  }

  const int preferred = bounce_preferred_leader(c, "grow");
  auto& via = c.node(preferred == 3 ? 2 : 3);
  // Nothing moves leadership back on its own: the periodic rebalance is off.
  CHECK(c.await_full_isr("grow", via).leader != preferred);

  code = c.cli("", {"cluster", "elect-leaders", "--topic", "grow", "--partition", "0"}, via, &out,
               &err);
  INFO(out << err);
  REQUIRE(code == 0);
  CHECK(out == "grow-0\telected the preferred leader\n");
  CHECK(c.await_partition("grow", via, [&](const auto& row) {
           return row.leader == preferred;
         }).leader == preferred);

  // Asked again, for each of the topic's partitions: none needs an election.
  code = c.cli("", {"cluster", "elect-leaders", "--topic", "grow"}, via, &out, &err);
  REQUIRE(code == 0);
  const auto lines = lines_of(out);
  CHECK(lines.size() == 3);
  for (const auto& line : lines) CHECK(line.find("ELECTION_NOT_NEEDED") != std::string::npos);

  code = c.cli("", {"cluster", "elect-leaders", "--topic", "grow", "--partition", "9"}, via, &out,
               &err);
  CHECK(code == 1);
  CHECK(out.find("grow-9\tUNKNOWN_TOPIC_OR_PARTITION") != std::string::npos);

  for (auto& n : c.nodes) n->stop();
}

TEST_CASE("the periodic rebalance moves leadership back to a restarted preferred replica",
          "[system][cluster][elect]") {
  node_cluster c(binary, 0, "leader.imbalance.check.interval.seconds = 1\n");
  c.create_topic("rebalanced", 3, c.node(1));
  const int preferred = bounce_preferred_leader(c, "rebalanced");
  CHECK(c.await_partition("rebalanced", c.node(preferred), [&](const auto& row) {
           return row.leader == preferred;
         }).leader == preferred);
  for (auto& n : c.nodes) n->stop();
}
