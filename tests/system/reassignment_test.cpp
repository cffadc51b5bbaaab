// Partition reassignment on a cluster of real `capstan node` processes (three voters and a fourth
// node, tests/support/node_cluster), through the real CLI: a topic moved onto nodes 1-3 with
// `topic reassign --replicas`, then node 3 killed for good under acks=all writes and replaced by
// node 4 with `topic reassign --replace 3=4`; node 4 catches up and joins every ISR, node 3's
// replicas leave, and `cluster unregister --id 3` removes it from the metadata. Node 3, started
// again, registers anew and deletes the replicas that were moved off it while it was down; then
// a second node is killed, and every acknowledged record is still read.

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "tests/support/eventually.hpp"
#include "tests/support/node_cluster.hpp"

using namespace capstan;
using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

const std::string binary = CAPSTAN_BINARY;
constexpr int partitions = 2;

// `count` records "<prefix>-i" produced with acks=all through `via`, spread over the partitions;
// the values acknowledged.
std::vector<std::string> produce(node_cluster& c, const std::string& prefix, int count,
                                 const node_process& via) {
  std::vector<std::string> values;
  for (int p = 0; p < partitions; ++p) {
    std::string input;
    std::vector<std::string> batch;
    for (int i = p; i < count; i += partitions) {
      batch.push_back(prefix + "-" + std::to_string(i));
      input += batch.back() + "\n";
    }
    std::string out, err;
    const int code = c.cli(input, {"produce", "moving", "--acks", "all", "--partition",
                                   std::to_string(p)},
                           via, &out, &err);
    INFO(err);
    REQUIRE(code == 0);
    values.insert(values.end(), batch.begin(), batch.end());
  }
  return values;
}

// Every partition of "moving" as `via` describes it once its replicas and ISR are `replicas`.
void await_replicas(node_cluster& c, const node_process& via, const std::vector<int>& replicas) {
  for (int p = 0; p < partitions; ++p) {
    INFO("partition " << p);
    const auto row = c.await_partition(
      "moving", via,
      [&](const auto& r) {
        return r.replicas == replicas && r.isr == replicas &&
               std::find(replicas.begin(), replicas.end(), r.leader) != replicas.end();
      },
      p);
    CHECK(row.replicas == replicas);
  }
}

} // namespace

TEST_CASE("a node lost for good is replaced with topic reassign: the new node catches up and "
          "joins every ISR, the lost one's replicas leave, nothing acknowledged is lost",
          "[system][cluster][reassign]") {
  node_cluster c(binary, 1);
  std::string out, err;
  c.create_topic("moving", 3, c.node(1), partitions);

  // Wherever the controller placed it, onto nodes 1-3 (refused while one of them has not
  // registered yet: the topic may be created before every node is).
  int code = 1;
  CHECK(eventually(
    [&] {
      code = c.cli("", {"topic", "reassign", "moving", "--replicas", "1,2,3"}, c.node(4), &out,
                   &err);
      return code == 0;
    },
    60s));
  INFO(out << err);
  REQUIRE(code == 0);
  CHECK(lines_of(out).size() == partitions);
  await_replicas(c, c.node(1), {1, 2, 3});

  auto acked = produce(c, "before", 40, c.node(1));
  c.node(3).kill();
  for (int p = 0; p < partitions; ++p) c.await_isr("moving", c.node(1), {1, 2}, p);
  auto more = produce(c, "degraded", 40, c.node(2));
  acked.insert(acked.end(), more.begin(), more.end());

  // Refusals first: they move nothing.
  code = c.cli("", {"topic", "reassign", "moving", "--replicas", "1,2,9"}, c.node(1), &out, &err);
  CHECK(code == 1);
  CHECK(out.find("INVALID_REPLICA_ASSIGNMENT") != std::string::npos);
  code = c.cli("", {"topic", "reassign", "--replace", "2=1"}, c.node(1), &out, &err);
  CHECK(code == 2);
  CHECK(err.find("INVALID_REPLICA_ASSIGNMENT") != std::string::npos);
  code = c.cli("", {"topic", "reassign", "moving", "--partition", "0", "--cancel"}, c.node(1), &out,
               &err);
  CHECK(code == 1);
  CHECK(out.find("NO_REASSIGNMENT_IN_PROGRESS") != std::string::npos);
  code = c.cli("", {"topic", "reassign", "moving"}, c.node(1), &out, &err);
  CHECK(code == 2);

  code = c.cli("", {"topic", "reassign", "--replace", "3=4"}, c.node(1), &out, &err);
  INFO(out << err);
  REQUIRE(code == 0);
  CHECK(lines_of(out).size() == partitions);
  await_replicas(c, c.node(1), {1, 2, 4});

  // Node 3 holds nothing any more: it leaves the metadata. A running node and an unknown id are
  // refused.
  code = c.cli("", {"cluster", "unregister", "--id", "1"}, c.node(2), &out, &err);
  CHECK(code == 1);
  CHECK(err.find("INVALID_REQUEST") != std::string::npos);
  code = c.cli("", {"cluster", "unregister", "--id", "9"}, c.node(2), &out, &err);
  CHECK(code == 1);
  CHECK(err.find("BROKER_ID_NOT_REGISTERED") != std::string::npos);
  // Fenced once its session ran out.
  CHECK(eventually(
    [&] { return c.registered_nodes(c.node(2)).find("\t3\tfenced") != std::string::npos; },
    30s));
  code = c.cli("", {"cluster", "unregister", "--id", "3"}, c.node(2), &out, &err);
  INFO(out << err);
  REQUIRE(code == 0);
  CHECK(out.find("Unregistered node 3") != std::string::npos);
  {
    const auto nodes = c.registered_nodes(c.node(4));
    INFO(nodes);
    CHECK(nodes.find("\t3\t") == std::string::npos);
    CHECK(nodes.find("\t4\tunfenced") != std::string::npos);
  }

  more = produce(c, "moved", 40, c.node(4));
  acked.insert(acked.end(), more.begin(), more.end());

  // Node 3 comes back (a voter, so the quorum can lose another node) and registers anew: its
  // replicas were moved off while it was down, so it deletes them.
  c.node(3).start();
  CHECK(eventually(
    [&] { return c.registered_nodes(c.node(4)).find("\t3\tunfenced") != std::string::npos; },
    30s));
  for (int p = 0; p < partitions; ++p) {
    const auto dir = c.node(3).partition_dir({"moving", p});
    CHECK(eventually([&] { return !std::filesystem::exists(dir); }, 30s));
  }
  // A second node lost: the two left of the new replica set still hold everything.
  c.node(1).kill();
  for (int p = 0; p < partitions; ++p) c.await_isr("moving", c.node(2), {2, 4}, p);
  more = produce(c, "after", 20, c.node(4));
  acked.insert(acked.end(), more.begin(), more.end());

  auto read = c.consume("moving", c.node(4), acked.size());
  CHECK(std::set<std::string>(read.begin(), read.end()) ==
        std::set<std::string>(acked.begin(), acked.end()));
  CHECK(read.size() == acked.size());
  for (auto& n : c.nodes)
    if (n->running()) n->stop();
}
