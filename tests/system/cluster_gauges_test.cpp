// The cluster gauges of every node's metrics endpoint on a cluster of real `capstan node`
// processes (tests/support/node_cluster: three voters on 127.0.0.1), read as Kafka's standard
// alerts read them: UnderReplicatedPartitions > 0 on some node when a replica is gone, the sum of
// ActiveControllerCount over the nodes == 1, OfflinePartitionsCount counted once, on the active
// controller's node. Checked on a healthy cluster and after one of three nodes is killed.

#include <catch2/catch.hpp>

#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "tests/support/eventually.hpp"
#include "tests/support/http_get.hpp"
#include "tests/support/node_cluster.hpp"

using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

const std::string binary = CAPSTAN_BINARY;

struct gauges {
  long under_replicated = -1;
  long offline = -1;
  long active_controller = -1;
};

gauges scrape(const node_process& n) {
  const auto text = scrape_metrics(n.metrics_port());
  auto value = [&](const std::string& name) {
    std::smatch m;
    const std::regex line("\n" + name + " (-?\\d+)\n");
    return std::regex_search(text, m, line) ? std::stol(m[1]) : -1L;
  };
  return {value("capstan_under_replicated_partitions"), value("capstan_offline_partitions"),
          value("capstan_active_controller_count")};
}

} // namespace

TEST_CASE("with one of three nodes killed, the node leading its partitions reports them "
          "under-replicated, the active controller alone reports itself and the offline "
          "partitions",
          "[system][cluster][metrics]") {
  node_cluster c(binary, 0);
  // Three replicas of three partitions, and one replica each of three more: killing any node
  // leaves the first under-replicated and one of the second without a leader.
  c.create_topic("replicated", 3, c.node(1), 3);
  c.create_topic("single", 1, c.node(1), 3, {});
  for (int p = 0; p < 3; ++p) c.await_full_isr("replicated", c.node(1), {}, p);

  std::map<int, gauges> seen;
  auto read_all = [&](const std::vector<int>& ids) {
    seen.clear();
    for (int id : ids) seen[id] = scrape(c.node(id));
  };
  // Healthy: nothing under-replicated or offline, one active controller.
  const bool healthy = eventually(
      [&] {
        read_all({1, 2, 3});
        long active = 0;
        for (const auto& [id, g] : seen) {
          if (g.under_replicated != 0 || g.offline != 0 || g.active_controller < 0) return false;
          active += g.active_controller;
        }
        return active == 1;
      },
      60s);
  CHECK(healthy);

  int controller = 0;
  REQUIRE(eventually([&] { return (controller = c.active_controller()) != 0; }, 30s));
  const int victim = controller % 3 + 1;
  c.node(victim).kill();
  std::vector<int> live;
  for (int id = 1; id <= 3; ++id)
    if (id != victim) live.push_back(id);
  for (int p = 0; p < 3; ++p) c.await_full_isr("replicated", c.node(live.front()), {victim}, p);

  // The ISRs shrank to two: the partitions' leaders report them; every node reports the one
  // partition of `single` that lived on the dead node as offline only if it is the active
  // controller's; the sum of active controllers stays one.
  const bool broken = eventually(
      [&] {
        read_all(live);
        long under = 0;
        long active = 0;
        for (const auto& [id, g] : seen) {
          if (g.under_replicated < 0 || g.active_controller < 0) return false;
          under += g.under_replicated;
          active += g.active_controller;
          if (g.offline != (g.active_controller == 1 ? 1 : 0)) return false;
        }
        return under == 3 && active == 1;
      },
      60s);
  std::string shown;
  for (const auto& [id, g] : seen)
    shown += "node " + std::to_string(id) + ": under-replicated " +
             std::to_string(g.under_replicated) + ", offline " + std::to_string(g.offline) +
             ", active controller " + std::to_string(g.active_controller) + "\n";
  INFO(shown);
  CHECK(broken);

  // What the gauges count, `topic describe` lists with kafka-topics' filters.
  const auto described = [&](const std::string& filter) {
    std::string out, err;
    REQUIRE(c.cli("", {"topic", "describe", filter}, c.node(live.front()), &out, &err) == 0);
    std::map<std::string, int> topics;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) {
      REQUIRE(line.rfind("\tTopic: ", 0) == 0); // partition lines only
      ++topics[line.substr(8, line.find('\t', 8) - 8)];
    }
    return topics;
  };
  CHECK(described("--under-replicated-partitions") == std::map<std::string, int>{{"replicated", 3}});
  CHECK(described("--unavailable-partitions") == std::map<std::string, int>{{"single", 1}});
}
