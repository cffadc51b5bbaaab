// `capstan log repair` on a node of a multi-node cluster, whose replicas the controller placed
// there: real `capstan node` processes (tests/support/node_cluster: three voters on 127.0.0.1).
// The node knows such a replica only from its checkpoints and its directory, not from a metadata
// store of its own.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tests/support/child_process.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/node_cluster.hpp"

using namespace capstan;
using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

const std::string binary = CAPSTAN_BINARY;

std::string numbered(const std::string& prefix, int from, int to) {
  std::string out;
  for (int i = from; i < to; ++i) out += prefix + std::to_string(i) + "\n";
  return out;
}

} // namespace

TEST_CASE("a follower's replica directory lost while its node was down is offline, and after "
          "log repair it catches up and rejoins the ISR",
          "[system][cluster][damage]") {
  node_cluster c(binary, 0);
  c.create_topic("r", 3, c.node(1));
  const auto row = c.await_full_isr("r", c.node(1));
  const int follower = row.leader % 3 + 1;
  const int other = 6 - row.leader - follower; // nodes 1, 2 and 3
  std::string out, err;
  REQUIRE(c.cli(numbered("a", 0, 300), {"produce", "r", "--acks", "all"}, c.node(row.leader), &out,
                &err) == 0);
  auto& f = c.node(follower);
  f.stop();
  std::filesystem::remove_all(f.partition_dir({"r", 0}));

  // Back without the directory: offline, out of the ISR; the others go on with acks=all.
  f.start();
  c.await_isr("r", c.node(other), {row.leader, other});
  const auto offline = "r-0 on node " + std::to_string(follower) + " is offline";
  CHECK(eventually([&] { return f.log().find(offline) != std::string::npos; }, 30s));
  REQUIRE(c.cli(numbered("b", 0, 200), {"produce", "r", "--acks", "all"}, c.node(row.leader), &out,
                &err) == 0);
  f.stop();

  const auto data = f.data_dir().string();
  CHECK(run_to_end(binary, {"log", "repair", "--data-dir", data}, c.dir.path(), &out, &err) == 1);
  INFO(out << err);
  CHECK(out.find("r-0: the directory is missing") != std::string::npos);
  CHECK(out.find("start the log empty at offset 300") != std::string::npos);
  REQUIRE(run_to_end(binary, {"log", "repair", "--data-dir", data, "--execute"}, c.dir.path(), &out,
                     &err) == 0);

  // Repaired: it fetches from the leader where its log now starts and is in the ISR again.
  f.start();
  c.await_full_isr("r", c.node(other));
  CHECK(f.log().find("is offline") == std::string::npos);
  const auto read = c.consume("r", c.node(follower), 500);
  REQUIRE(read.size() == 500);
  CHECK(read.front() == "a0");
  CHECK(read.back() == "b199");
}
