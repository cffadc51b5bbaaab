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
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "tests/support/eventually.hpp"
#include "tests/support/free_port.hpp"
#include "tests/support/node_process.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

const std::string binary = CAPSTAN_BINARY;
const std::string cluster_id = "capstan-system-test-1";

// Short heartbeats, sessions and elections, so that failover takes seconds; the test waits for
// outcomes, never for these.
const std::string settings = "broker.heartbeat.interval.ms = 200\n"
                             "broker.session.timeout.ms = 3000\n"
                             "controller.quorum.election.timeout.ms = 500\n"
                             "replica.lag.time.max.ms = 10000\n"
                             "replica.fetch.wait.max.ms = 200\n"
                             "replica.fetch.backoff.ms = 50\n"
                             "replica.socket.timeout.ms = 2000\n";

struct cluster {
  temp_dir dir{"capstan-cluster"};
  std::vector<std::unique_ptr<node_process>> nodes;

  // Voters 1..3 on pinned cluster ports, then `brokers` more nodes that are no voters.
  explicit cluster(int brokers) {
    std::vector<uint16_t> ports;
    std::string quorum;
    for (int id = 1; id <= 3; ++id) {
      ports.push_back(free_port());
      quorum +=
          (id > 1 ? "," : "") + std::to_string(id) + "@127.0.0.1:" + std::to_string(ports.back());
    }
    const std::vector<std::string> flags{"--controller-quorum", quorum, "--cluster-id", cluster_id};
    for (int id = 1; id <= 3 + brokers; ++id) {
      const std::string listen =
          id <= 3 ? "127.0.0.1:" + std::to_string(ports[static_cast<size_t>(id - 1)])
                  : "127.0.0.1:0";
      nodes.push_back(std::make_unique<node_process>(
          dir, id, node_process_options{binary, settings, listen, flags}));
    }
    for (auto& n : nodes) n->start();
  }
  ~cluster() {
    for (auto& n : nodes)
      if (n->running()) n->kill();
  }

  node_process& node(int id) { return *nodes.at(static_cast<size_t>(id - 1)); }

  int cli(const std::string& input, std::vector<std::string> args, const node_process& via,
          std::string* out, std::string* err) {
    args.push_back("--bootstrap");
    args.push_back(via.bootstrap());
    return run_cli(binary, dir, input, args, out, err);
  }

  // The node whose controller said last that it is active and has not said since that it no
  // longer is, among the running voters; 0 if none.
  int active_controller() {
    int best = 0;
    int best_term = -1;
    static const std::regex active(R"(controller (\d+): active in term (\d+))");
    for (int id = 1; id <= 3; ++id) {
      if (!node(id).running()) continue;
      const auto log = node(id).log();
      const auto last_active = log.rfind("active in term");
      if (last_active == std::string::npos) continue;
      const auto last_inactive = log.rfind("no longer active");
      if (last_inactive != std::string::npos && last_inactive > last_active) continue;
      std::smatch m;
      const auto tail = log.substr(log.rfind("controller ", last_active));
      if (!std::regex_search(tail, m, active)) continue;
      if (std::stoi(m[2]) > best_term) {
        best_term = std::stoi(m[2]);
        best = id;
      }
    }
    return best;
  }

  // `topic create` through `via` until the controller takes it (the nodes are still registering,
  // or an election is under way); fails the test if it never does.
  void create_topic(const std::string& name, int replication_factor, const node_process& via) {
    std::string out, err;
    const bool created = eventually(
        [&] {
          return cli("",
                     {"topic", "create", name, "--partitions", "1", "--replication-factor",
                      std::to_string(replication_factor), "--config", "min.insync.replicas=2"},
                     via, &out, &err) == 0;
        },
        60s);
    INFO(out << err);
    REQUIRE(created);
  }

  // The topic's partition 0 as node `via` describes it once every replica in `isr` is in its ISR
  // with a leader among them: "Leader: N ... Isr: a,b,c".
  int await_isr(const std::string& topic, const node_process& via, std::vector<int> isr) {
    std::sort(isr.begin(), isr.end());
    std::string out, err;
    int leader = -1;
    const bool settled = eventually(
        [&] {
          if (cli("", {"topic", "describe", topic}, via, &out, &err) != 0) return false;
          static const std::regex row(
              R"(Partition: 0\tLeader: (\d+)\tReplicas: [0-9,]+\tIsr: ([0-9,]+))");
          std::smatch m;
          if (!std::regex_search(out, m, row)) return false;
          std::vector<int> got;
          std::string list = m[2];
          for (size_t at = 0; at < list.size();) {
            const auto comma = list.find(',', at);
            got.push_back(std::stoi(list.substr(at, comma - at)));
            at = comma == std::string::npos ? list.size() : comma + 1;
          }
          std::sort(got.begin(), got.end());
          leader = std::stoi(m[1]);
          return got == isr && std::find(isr.begin(), isr.end(), leader) != isr.end();
        },
        60s);
    INFO("node " << via.id() << ": " << out << err);
    REQUIRE(settled);
    return leader;
  }

  // The topic's records read through `via` from the beginning: `count` of them, or (0) all there
  // are, until nothing new came for 5 s.
  std::vector<std::string> consume(const std::string& topic, const node_process& via,
                                   size_t count) {
    std::string out, err;
    std::vector<std::string> args{"consume", topic, "--from-beginning", "--timeout-ms",
                                  count ? "20000" : "5000"};
    if (count) {
      args.push_back("--max-messages");
      args.push_back(std::to_string(count));
    }
    const int code = cli("", args, via, &out, &err);
    INFO("consumed through node " << via.id() << ": " << err);
    REQUIRE(code == 0);
    return lines_of(out);
  }
};

} // namespace

TEST_CASE("three voters and a broker-only node form a cluster with their own controller: an RF=3 "
          "topic is created, produced to with acks=all and consumed through every node, and all "
          "goes on when the active controller is killed",
          "[system][cluster]") {
  cluster c(1);
  auto& broker_only = c.node(4);
  std::string out, err;

  // Created through the broker-only node: it forwards to the active controller.
  c.create_topic("replicated", 3, broker_only);
  for (auto& n : c.nodes) c.await_isr("replicated", *n, {1, 2, 3});
  INFO(c.node(1).log());
  int code =
      c.cli("one\ntwo\nthree\n", {"produce", "replicated", "--acks", "all"}, c.node(2), &out, &err);
  INFO(err);
  REQUIRE(code == 0);
  for (auto& n : c.nodes)
    CHECK(c.consume("replicated", *n, 3) == std::vector<std::string>{"one", "two", "three"});

  // The fourth node is a broker of the cluster: a topic with four replicas puts one on it.
  c.create_topic("wide", 4, c.node(1));
  c.await_isr("wide", broker_only, {1, 2, 3, 4});
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
  c.await_isr("replicated", survivor, live_voters);
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
  c.await_isr("after-failover", c.node(live.back()), live);

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
  INFO(out << err);
  REQUIRE(settled);
  for (const auto& m : d.members)
    if (m.role == "leader") CHECK(m.node == d.active);

  // A config change through the broker-only node goes to the active controller, and another
  // node's describe shows it.
  c.create_topic("configured", 3, broker_only);
  int code = c.cli("", {"topic", "alter-config", "configured", "--config", "retention.ms=123456"},
                   broker_only, &out, &err);
  INFO(out << err);
  REQUIRE(code == 0);
  const bool visible = eventually(
      [&] {
        return c.cli("", {"topic", "describe", "configured"}, c.node(2), &out, &err) == 0 &&
               out.find("retention.ms=123456") != std::string::npos;
      },
      30s);
  INFO(out << err);
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
  INFO(out << err);
  CHECK(fenced);

  for (auto& n : c.nodes)
    if (n->running()) n->stop();
}
