// A cluster of real `capstan node` processes with their own controller quorum: three voters
// (--controller-quorum names each one's cluster listener, pinned to a free port) and a fourth
// node that is a broker only. No test stand-in plays the controller: the nodes elect one among
// the voters, register and heartbeat with it, and every topic change and leader election below
// is its own. Everything goes through the real CLI (`capstan topic`, `produce`, `consume`), at
// every node. Then the active controller is killed with SIGKILL: the others elect a new one,
// fence the dead node after broker.session.timeout.ms, move its leaderships, and produce,
// consume and topic creation go on, with every acknowledged record still there. A second case
// reads `cluster describe` through the broker-only node (quorum members, fencing) and changes a
// topic config there.

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
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
// The cluster of this file: three voters and `brokers` broker-only nodes (node_cluster).
struct cluster : node_cluster {
  explicit cluster(int brokers) : node_cluster(binary, brokers) {}
};

} // namespace

TEST_CASE("three voters and a broker-only node form a cluster with their own controller, and an "
          "RF=3 topic is created, produced to with acks=all and consumed through every node, and "
          "all goes on when the active controller is killed",
          "[system][cluster]") {
  cluster c(1);
  auto& broker_only = c.node(4);
  std::string out, err;

  // Created through the broker-only node: it forwards to the active controller.
  c.create_topic("replicated", 3, broker_only);
  for (auto& n : c.nodes) c.await_full_isr("replicated", *n);
  int code =
      c.cli("one\ntwo\nthree\n", {"produce", "replicated", "--acks", "all"}, c.node(2), &out, &err);
  INFO(err);
  REQUIRE(code == 0);
  for (auto& n : c.nodes)
    CHECK(c.consume("replicated", *n, 3) == std::vector<std::string>{"one", "two", "three"});

  // The fourth node is a broker of the cluster: a topic with four replicas puts one on it.
  c.create_topic("wide", 4, c.node(1));
  CHECK(c.await_full_isr("wide", broker_only).replicas == std::vector<int>{1, 2, 3, 4});
  code = c.cli("a\nb\n", {"produce", "wide", "--acks", "all"}, broker_only, &out, &err);
  INFO(err);
  REQUIRE(code == 0);
  CHECK(c.consume("wide", c.node(3), 2) == std::vector<std::string>{"a", "b"});

  // The active controller dies. The others elect a new one, which fences the dead node once its
  // session runs out and leads the partition from the rest of the ISR.
  int controller = 0;
  REQUIRE(eventually([&] { return (controller = c.active_controller()) != 0; }, 30s));
  c.node(controller).kill();
  std::vector<int> live;
  for (int id = 1; id <= 4; ++id)
    if (id != controller) live.push_back(id);
  std::vector<int> live_voters;
  for (int id = 1; id <= 3; ++id)
    if (id != controller) live_voters.push_back(id);
  auto& survivor = c.node(live_voters.front());
  c.await_full_isr("replicated", survivor, {controller});
  REQUIRE(eventually([&] { return c.active_controller() != 0; }, 30s));

  // Every acknowledged record is there, and acks=all writes go on through every live node.
  bool produced = eventually(
      [&] {
        return c.cli("four\nfive\n", {"produce", "replicated", "--acks", "all"}, broker_only, &out,
                     &err) == 0;
      },
      60s);
  INFO(err);
  REQUIRE(produced);
  for (int id : live) {
    const auto got = c.consume("replicated", c.node(id), 0);
    REQUIRE(got.size() >= 5);
    CHECK(std::vector<std::string>(got.begin(), got.begin() + 3) ==
          std::vector<std::string>{"one", "two", "three"});
    CHECK(std::vector<std::string>(got.end() - 2, got.end()) ==
          std::vector<std::string>{"four", "five"});
  }

  // The new controller creates topics too.
  c.create_topic("after-failover", 3, survivor);
  CHECK(c.await_full_isr("after-failover", c.node(live.back())).replicas == live);

  for (int id : live) c.node(id).stop();
}

namespace {

// `cluster describe`'s quorum part as parsed from the CLI's output.
struct described {
  struct member {
    int node = 0;
    std::string role; // "unreachable" when it did not answer
    long term = -1;
  };
  int active = -1;
  std::vector<member> members;
  std::map<int, std::string> nodes; // node id -> "fenced" / "unfenced"
};

described parse_describe(const std::string& out) {
  described d;
  static const std::regex active(R"(Active controller: (\d+))");
  static const std::regex member(
      R"(^\t(\d+)\t(leader|follower|pre-candidate|candidate)\tTerm: (\d+))");
  static const std::regex gone(R"(^\t(\d+)\tunreachable\t)");
  static const std::regex node(R"(^\t(\d+)\t(fenced|unfenced)\tBroker epoch: )");
  std::smatch m;
  if (std::regex_search(out, m, active)) d.active = std::stoi(m[1]);
  for (const auto& line : lines_of(out)) {
    if (std::regex_search(line, m, member))
      d.members.push_back({std::stoi(m[1]), m[2], std::stol(m[3])});
    else if (std::regex_search(line, m, gone))
      d.members.push_back({std::stoi(m[1]), "unreachable", -1});
    else if (std::regex_search(line, m, node))
      d.nodes[std::stoi(m[1])] = m[2];
  }
  return d;
}

} // namespace

TEST_CASE("cluster describe through a broker-only node shows the quorum members' Raft state and "
          "every node's fencing, and alter-config there reaches the active controller",
          "[system][cluster]") {
  cluster c(1);
  auto& broker_only = c.node(4);
  std::string out, err;
  described d;
  auto describe = [&] {
    if (c.cli("", {"cluster", "describe"}, broker_only, &out, &err) != 0) return false;
    d = parse_describe(out);
    return true;
  };

  // Three members, one leader, one term, and all four nodes registered and unfenced.
  const bool settled = eventually(
      [&] {
        if (!describe() || d.members.size() != 3 || d.nodes.size() != 4) return false;
        const auto leaders = std::count_if(d.members.begin(), d.members.end(),
                                           [](const auto& m) { return m.role == "leader"; });
        const bool one_term = std::all_of(d.members.begin(), d.members.end(), [&](const auto& m) {
          return m.term == d.members.front().term;
        });
        const bool unfenced = std::all_of(d.nodes.begin(), d.nodes.end(),
                                          [](const auto& n) { return n.second == "unfenced"; });
        return leaders == 1 && one_term && unfenced && d.active > 0;
      },
      60s);
  INFO(untabbed(out + err));
  REQUIRE(settled);
  for (const auto& m : d.members)
    if (m.role == "leader") CHECK(m.node == d.active);

  // A config change through the broker-only node goes to the active controller, and another
  // node's describe shows it.
  c.create_topic("configured", 3, broker_only);
  int code = c.cli("", {"topic", "alter-config", "configured", "--config", "retention.ms=123456"},
                   broker_only, &out, &err);
  INFO(untabbed(out + err));
  REQUIRE(code == 0);
  const bool visible = eventually(
      [&] {
        return c.cli("", {"topic", "describe", "configured"}, c.node(2), &out, &err) == 0 &&
               out.find("retention.ms=123456") != std::string::npos;
      },
      30s);
  INFO(untabbed(out + err));
  CHECK(visible);

  // A voter that is not the active controller dies: it shows as unreachable, and once its session
  // runs out the active controller has fenced it.
  const int victim = d.active == 1 ? 2 : 1;
  c.node(victim).kill();
  const bool fenced = eventually(
      [&] {
        if (!describe() || d.members.size() != 3) return false;
        const auto it = std::find_if(d.members.begin(), d.members.end(),
                                     [&](const auto& m) { return m.node == victim; });
        return it != d.members.end() && it->role == "unreachable" && d.nodes.count(victim) &&
               d.nodes[victim] == "fenced";
      },
      60s);
  INFO(untabbed(out + err));
  CHECK(fenced);

  for (auto& n : c.nodes)
    if (n->running()) n->stop();
}
