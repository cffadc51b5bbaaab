// Every node of a cluster of real `capstan node` processes (three voters, tests/support/
// node_cluster) killed with SIGKILL at once, and one of them never coming back: the two that do
// bring every partition back with nothing acknowledged lost (docs/controller.md, "Last replica
// standing"). Before the controller elected the most up-to-date of the returning replicas, every
// ISR collapsed onto the node whose session expired last, and the partitions it never came back
// for stayed offline although two nodes held their data.

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/eventually.hpp"
#include "tests/support/node_cluster.hpp"

using namespace capstan;
using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

const std::string binary = CAPSTAN_BINARY;
constexpr int partitions = 3;

} // namespace

TEST_CASE("after all three nodes are killed with SIGKILL and only two come back, every partition "
          "of an RF=3 topic with min.insync.replicas=2 is led again, keeps every acknowledged "
          "record and takes acks=all writes",
          "[system][cluster][failover]") {
  node_cluster c(binary, 0);
  c.create_topic("survivor", 3, c.node(1), partitions);
  for (int p = 0; p < partitions; ++p) c.await_isr("survivor", c.node(1), {1, 2, 3}, p);

  std::string out, err;
  std::vector<std::string> acked;
  for (int p = 0; p < partitions; ++p) {
    std::string input;
    for (int i = 0; i < 5; ++i) {
      acked.push_back("p" + std::to_string(p) + "-" + std::to_string(i));
      input += acked.back() + "\n";
    }
    const int code = c.cli(input,
                           {"produce", "survivor", "--acks", "all", "--partition", std::to_string(p)},
                           c.node(1 + p % 3), &out, &err);
    INFO(err);
    REQUIRE(code == 0);
  }

  for (auto& n : c.nodes) n->kill();
  // Node 3 is lost for good. Its session is the last one the new controller sees expire (the
  // sessions of the old processes expire together and are fenced in id order), so each ISR would
  // end as {3}.
  c.node(1).start();
  c.node(2).start();

  for (int p = 0; p < partitions; ++p) {
    INFO("partition " << p);
    const auto row = c.await_partition(
        "survivor", c.node(1),
        [](const node_cluster::partition_row& r) { return r.leader == 1 || r.leader == 2; }, p);
    CHECK(row.leader != 3);
  }
  // The other survivor catches up and rejoins the ISR; with two members the high watermark
  // moves again (min.insync.replicas=2) and covers every acknowledged record.
  for (int p = 0; p < partitions; ++p) c.await_isr("survivor", c.node(1), {1, 2}, p);
  // `topic describe` names the replica that is gone on every partition's line.
  REQUIRE(c.cli("", {"topic", "describe", "survivor"}, c.node(1), &out, &err) == 0);
  INFO(out);
  size_t offline_rows = 0;
  for (size_t at = out.find("\tOffline: 3"); at != std::string::npos;
       at = out.find("\tOffline: 3", at + 1))
    ++offline_rows;
  CHECK(offline_rows == partitions);
  auto read = c.consume("survivor", c.node(2), acked.size());
  std::sort(read.begin(), read.end());
  auto expected = acked;
  std::sort(expected.begin(), expected.end());
  CHECK(read == expected);
  const bool produced = eventually(
      [&] {
        return c.cli("after\n", {"produce", "survivor", "--acks", "all", "--partition", "0"},
                     c.node(2), &out, &err) == 0;
      },
      60s);
  INFO(err);
  CHECK(produced);
}

// KIP-966's unclean-shutdown rule: a partition's last ISR member coming back on an empty disk (a
// new machine under its id) must not be elected on its own say. Before, its first heartbeat
// elected it cleanly (it was in the ISR and live), and the replicas that held the records
// truncated to its empty log. Nor may it count as one of the replicas recovery needs: with it and
// a replica that was down while the records were acknowledged, recovery elected the latter and
// the records were gone.
TEST_CASE("the last ISR member restarted on an empty data dir: neither elected nor counted, "
          "and the partition comes back on a replica that holds every acknowledged record",
          "[system][cluster][failover]") {
  node_cluster c(binary, 2); // voters 1-3, broker-only nodes 4 and 5
  c.create_topic("wiped", 3, c.node(1), 1, {"min.insync.replicas=2"});
  std::string out, err;
  // Replicas on nodes 4, 5 and 1, node 4 leading: killing 5 and 1 leaves the quorum two voters.
  // (Refused while node 4 or 5 has not registered yet.)
  const bool moved = eventually(
      [&] {
        return c.cli("", {"topic", "reassign", "wiped", "--replicas", "4,5,1"}, c.node(2), &out,
                     &err) == 0;
      },
      60s);
  INFO(out << err);
  REQUIRE(moved);
  c.await_partition("wiped", c.node(2), [](const node_cluster::partition_row& r) {
    return r.replicas == std::vector<int>{1, 4, 5} && r.isr.size() == 3;
  });
  REQUIRE(eventually(
      [&] {
        c.cli("", {"cluster", "elect-leaders", "--topic", "wiped"}, c.node(2), &out, &err);
        auto rows = c.describe("wiped", c.node(2));
        return rows && rows->at(0).leader == 4;
      },
      60s));

  // Node 1 is down while nodes 4 and 5 acknowledge the records.
  c.node(1).kill();
  c.await_isr("wiped", c.node(2), {4, 5});
  std::string input;
  std::vector<std::string> acked;
  for (int i = 0; i < 20; ++i) {
    acked.push_back("kept-" + std::to_string(i));
    input += acked.back() + "\n";
  }
  REQUIRE(c.cli(input, {"produce", "wiped", "--acks", "all"}, c.node(2), &out, &err) == 0);

  // Node 5 dies: node 4 is left the only ISR member; then it dies too, and stays the last.
  c.node(5).kill();
  c.await_isr("wiped", c.node(2), {4});
  c.node(4).kill();
  c.await_partition("wiped", c.node(2),
                    [](const node_cluster::partition_row& r) { return r.leader < 0; });

  // A new machine takes node 4's place with an empty disk; it registers and is unfenced before
  // the others are back.
  std::filesystem::remove_all(c.node(4).data_dir());
  c.node(4).start();
  CHECK(eventually(
      [&] { return c.registered_nodes(c.node(2)).find("\t4\tunfenced") != std::string::npos; },
      60s));
  std::this_thread::sleep_for(2s);
  {
    auto rows = c.describe("wiped", c.node(2));
    REQUIRE(rows);
    CHECK(rows->at(0).leader != 4);
  }
  // Node 1 comes back without the records: with the wiped node 4 that makes two reports, but
  // only node 5 holds the records.
  c.node(1).start();
  CHECK(eventually(
      [&] { return c.registered_nodes(c.node(2)).find("\t1\tunfenced") != std::string::npos; },
      60s));
  std::this_thread::sleep_for(3s);
  {
    auto rows = c.describe("wiped", c.node(2));
    REQUIRE(rows);
    CHECK(rows->at(0).leader < 0);
    REQUIRE(c.cli("", {"topic", "describe", "wiped"}, c.node(2), &out, &err) == 0);
    CHECK(out.find("\tWiped: 4") != std::string::npos);
  }
  c.node(5).start();
  const auto row = c.await_partition(
      "wiped", c.node(2), [](const node_cluster::partition_row& r) { return r.leader >= 0; });
  CHECK(row.leader != 4);
  CHECK(c.consume("wiped", c.node(2), acked.size()) == acked);
  const bool produced = eventually(
      [&] {
        return c.cli("after\n", {"produce", "wiped", "--acks", "all"}, c.node(2), &out, &err) == 0;
      },
      60s);
  CHECK(produced);
  // Caught up, node 4 is back in the ISR and no longer wiped.
  c.await_partition("wiped", c.node(2),
                    [](const node_cluster::partition_row& r) { return r.isr.size() == 3; });
  REQUIRE(c.cli("", {"topic", "describe", "wiped"}, c.node(2), &out, &err) == 0);
  CHECK(out.find("Wiped:") == std::string::npos);
}
