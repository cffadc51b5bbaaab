// How real `capstan node` processes join a cluster with its own controller quorum
// (tests/support/node_cluster: three voters on 127.0.0.1): after every node was killed with
// SIGKILL and started again on its data dir, each registers at once as its data dir's next
// process, and every partition is back with its whole ISR and every acknowledged record within a
// session timeout; when only two of three come back, the partitions they led are theirs again at
// once. A node the cluster refuses (another cluster id, a node id another live process has) or
// whose quorum names two voters at one address exits non-zero naming why, rather than serving
// nothing of the cluster.

#include <catch2/catch.hpp>

#include <algorithm>
#include <csignal>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "tests/support/child_process.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/free_port.hpp"
#include "tests/support/node_cluster.hpp"

using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

const std::string binary = CAPSTAN_BINARY;

// Every partition of `topic` as `via` describes it: leader, replicas and ISR per line.
std::vector<node_cluster::partition_row> describe(node_cluster& c, const std::string& topic,
                                                  const node_process& via) {
  static const std::regex row(R"(Leader: (-?\d+)\tReplicas: ([0-9,]+)\tIsr: ([0-9,]*))");
  std::string out, err;
  std::vector<node_cluster::partition_row> rows;
  if (c.cli("", {"topic", "describe", topic}, via, &out, &err) != 0) return rows;
  auto ids = [](const std::string& list) {
    std::vector<int> v;
    std::regex id(R"(\d+)");
    for (auto it = std::sregex_iterator(list.begin(), list.end(), id); it != std::sregex_iterator();
         ++it)
      v.push_back(std::stoi(it->str()));
    std::sort(v.begin(), v.end());
    return v;
  };
  for (auto it = std::sregex_iterator(out.begin(), out.end(), row); it != std::sregex_iterator();
       ++it)
    rows.push_back({std::stoi((*it)[1]), ids((*it)[2]), ids((*it)[3])});
  return rows;
}

bool whole(const std::vector<node_cluster::partition_row>& rows, size_t partitions) {
  return rows.size() == partitions &&
         std::all_of(rows.begin(), rows.end(), [](const node_cluster::partition_row& r) {
           return r.leader >= 0 && r.isr == r.replicas;
         });
}

} // namespace

TEST_CASE("after every node is killed and started again, each registers at once as its data "
          "dir's next process, and every partition is back whole within a session timeout with "
          "every acknowledged record",
          "[system][registration]") {
  // A session far longer than a restart takes: a node that waited out its old process's session,
  // or a partition that waited for a session to run out, could not make it in half of it.
  constexpr auto session = 30s;
  node_cluster c(binary, 0, "broker.session.timeout.ms = 30000\n");
  constexpr size_t partitions = 3;
  c.create_topic("restarted", 3, c.node(1), partitions);
  REQUIRE(eventually([&] { return whole(describe(c, "restarted", c.node(1)), partitions); }, 60s));

  std::string input, out, err;
  std::vector<std::string> values;
  for (int i = 0; i < 60; ++i) {
    values.push_back("record-" + std::to_string(i));
    input += values.back() + "\n";
  }
  int code = c.cli(input, {"produce", "restarted", "--acks", "all"}, c.node(2), &out, &err);
  INFO(err);
  REQUIRE(code == 0);

  for (auto& n : c.nodes) n->kill();
  for (auto& n : c.nodes) n->start();

  // The new controller tells the new processes what the old ones hosted, at the same cluster
  // addresses, so the partitions may serve before any registration: what matters is that every
  // node's registration is taken, and the partitions are whole after that.
  const bool registered = eventually(
      [&] {
        return std::all_of(c.nodes.begin(), c.nodes.end(), [](const auto& n) {
          return n->log().find("registered with controller") != std::string::npos;
        });
      },
      session / 2);
  const bool back = eventually(
      [&] {
        for (auto& n : c.nodes)
          if (!whole(describe(c, "restarted", *n), partitions)) return false;
        return true;
      },
      session / 2);
  std::string logs;
  for (auto& n : c.nodes) logs += n->log();
  INFO(logs.substr(logs.size() > 20000 ? logs.size() - 20000 : 0));
  CHECK(registered);
  CHECK(back);
  // No registration was refused while an old process's session lasted, and no session had to
  // run out for a partition to move on.
  CHECK(logs.find("DUPLICATE_BROKER_REGISTRATION") == std::string::npos);
  CHECK(logs.find("the session of node") == std::string::npos);

  for (auto& n : c.nodes) {
    INFO("read through node " << n->id());
    auto read = c.consume("restarted", *n, values.size());
    std::sort(read.begin(), read.end());
    auto expected = values;
    std::sort(expected.begin(), expected.end());
    CHECK(read == expected);
  }
  code = c.cli("after\n", {"produce", "restarted", "--acks", "all"}, c.node(3), &out, &err);
  INFO(err);
  CHECK(code == 0);
}

TEST_CASE("after every node is killed and two of three come back, the partitions those two led "
          "are theirs again at once, never handed to the registration of the one still gone",
          "[system][registration]") {
  constexpr auto session = 30s;
  node_cluster c(binary, 0, "broker.session.timeout.ms = 30000\n");
  // Six partitions: placement puts node 3 right after node 1 or 2 in some replica lists, where
  // an election among unfenced registrations would hand the partition to node 3's dead one.
  constexpr size_t partitions = 6;
  c.create_topic("two-back", 3, c.node(1), partitions);
  std::vector<node_cluster::partition_row> before;
  REQUIRE(eventually([&] { return whole(before = describe(c, "two-back", c.node(1)), partitions); },
                     60s));

  // All at once, as a power cut: the active controller fences a node as soon as its connection
  // closes, so killing them one after the other would let it move leaderships in between.
  for (auto& n : c.nodes) n->signal(SIGSTOP);
  for (auto& n : c.nodes) n->kill();
  c.node(1).start();
  c.node(2).start();

  // Through node 1's metadata: once it names both nodes at their new client ports, both are
  // registered and unfenced, and its partitions are as the controller decided since.
  static const std::regex leader_of(R"(two-back-(\d+)\tLeader: (-?\d+))");
  std::string out, err;
  auto listed = [&](const node_process& n) {
    const auto entry = "\t" + std::to_string(n.id()) + "\t" + n.bootstrap();
    return out.find(entry + "\n") != std::string::npos ||
           out.find(entry + "\t") != std::string::npos;
  };
  std::map<int, int> now;
  const bool led = eventually(
      [&] {
        if (c.cli("", {"cluster", "describe"}, c.node(1), &out, &err) != 0) return false;
        if (!listed(c.node(1)) || !listed(c.node(2))) return false;
        now.clear();
        for (auto it = std::sregex_iterator(out.begin(), out.end(), leader_of);
             it != std::sregex_iterator(); ++it)
          now[std::stoi((*it)[1])] = std::stoi((*it)[2]);
        for (size_t p = 0; p < partitions; ++p)
          if (before[p].leader != 3 && now[static_cast<int>(p)] != 1 &&
              now[static_cast<int>(p)] != 2)
            return false;
        return now.size() == partitions;
      },
      session / 2);
  std::string shown;
  for (size_t p = 0; p < partitions; ++p)
    shown += "partition " + std::to_string(p) + ": leader " + std::to_string(before[p].leader) +
             " before, " + std::to_string(now[static_cast<int>(p)]) + " now\n";
  INFO(shown);
  INFO(untabbed(out + err));
  CHECK(led);
  CHECK(c.node(1).log().find("DUPLICATE_BROKER_REGISTRATION") == std::string::npos);
  CHECK(c.node(2).log().find("DUPLICATE_BROKER_REGISTRATION") == std::string::npos);
}

TEST_CASE("a node of another cluster exits non-zero naming INCONSISTENT_CLUSTER_ID",
          "[system][registration]") {
  node_cluster c(binary, 0);
  auto options = c.options(4);
  auto id = std::find(options.extra_args.begin(), options.extra_args.end(), "--cluster-id");
  REQUIRE(id != options.extra_args.end());
  *(id + 1) = "another-cluster";
  node_process stranger(c.dir, 4, options);
  stranger.start();
  const auto code = stranger.wait_for_exit(30s);
  INFO(stranger.log());
  REQUIRE(code);
  CHECK(*code == 1);
  CHECK(stranger.log().find("INCONSISTENT_CLUSTER_ID") != std::string::npos);
  CHECK(stranger.log().find("another-cluster") != std::string::npos);
}

TEST_CASE("a second live process with a node's id exits non-zero naming "
          "DUPLICATE_BROKER_REGISTRATION once that outlasts any old session, and the first "
          "goes on",
          "[system][registration]") {
  node_cluster c(binary, 1);
  c.create_topic("kept", 3, c.node(4));
  // Its own data dir: nothing ties it to node 4's process, which still heartbeats.
  temp_dir elsewhere("capstan-twin");
  node_process twin(elsewhere, 4, c.options(4));
  twin.start();
  // Refused for twice the session timeout (3 s in node_cluster), then it gives up.
  const auto code = twin.wait_for_exit(60s);
  INFO(twin.log());
  REQUIRE(code);
  CHECK(*code == 1);
  CHECK(twin.log().find("DUPLICATE_BROKER_REGISTRATION") != std::string::npos);
  CHECK(twin.log().find("another process with this node id is running") != std::string::npos);

  // The first node 4 never lost its registration.
  std::string out, err;
  CHECK(c.node(4).running());
  const int produced =
      c.cli("still\n", {"produce", "kept", "--acks", "all"}, c.node(4), &out, &err);
  INFO(err);
  CHECK(produced == 0);
  CHECK(c.node(4).log().find("registration lost") == std::string::npos);
}

TEST_CASE("a node whose controller quorum names two voters at one address exits 2 at start-up",
          "[system][registration]") {
  temp_dir dir("capstan-quorum");
  const auto port = std::to_string(free_port());
  const std::string quorum = "1@127.0.0.1:" + port + ",2@127.0.0.1:" + std::to_string(free_port()) +
                             ",3@127.0.0.1:" + port;
  std::string out, err;
  const int code = run_to_end(
      binary,
      {"node", "--node-id", "1", "--data-dir", (dir / "node-1").string(), "--listen",
       "127.0.0.1:0", "--cluster-listen", "127.0.0.1:" + port, "--metrics-listen", "127.0.0.1:0",
       "--kafka-listen", "127.0.0.1:0", "--controller-quorum", quorum, "--cluster-id", "quorum-test"},
      dir.path(), &out, &err, 30s);
  INFO(err);
  CHECK(code == 2);
  CHECK(err.find("voters 1 and 3 are both given 127.0.0.1:" + port) != std::string::npos);
  CHECK(err.find("ready") == std::string::npos);
}
