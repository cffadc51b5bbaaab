// Consumer-group offsets across a cluster (docs/groups.md): real `capstan node` processes
// (tests/support/node_cluster: three voters on 127.0.0.1). A group's commits live in the
// cluster's replicated __consumer_offsets, and the leader of the group's partition of it is the
// group's coordinator, whichever node a consumer bootstraps from.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tests/support/node_cluster.hpp"

using namespace capstan;
using namespace capstan::test;

namespace {

const std::string binary = CAPSTAN_BINARY;

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < text.size()) {
    auto end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    if (end > at) out.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

std::string numbered(const std::string& prefix, int from, int to) {
  std::string out;
  for (int i = from; i < to; ++i) out += prefix + std::to_string(i) + "\n";
  return out;
}

} // namespace

// Before, each node kept the commits of the consumers that bootstrapped from it in a
// __consumer_offsets of its own: a consumer that bootstrapped elsewhere found no commit and, with
// auto.offset.reset latest, skipped what the group had not read yet.
TEST_CASE("a group resumes where it committed whichever node its consumer bootstraps from, also "
          "after a kill -9 of its coordinator's node",
          "[system][cluster][groups]") {
  node_cluster c(binary, 0);
  c.create_topic("jobs", 3, c.node(1));
  std::string out, err;
  REQUIRE(c.cli(numbered("j", 0, 12), {"produce", "jobs", "--acks", "all"}, c.node(1), &out,
                &err) == 0);

  // Four records read and committed through node 1.
  REQUIRE(
      c.cli("",
            {"consume", "jobs", "--group", "workers", "--from-beginning", "--max-messages", "4"},
            c.node(1), &out, &err) == 0);
  INFO(err);
  CHECK(lines(out) == std::vector<std::string>{"j0", "j1", "j2", "j3"});

  // The same group through node 3 goes on from the commit, not from the end.
  REQUIRE(c.cli("", {"consume", "jobs", "--group", "workers", "--max-messages", "3"}, c.node(3),
                &out, &err) == 0);
  CHECK(lines(out) == std::vector<std::string>{"j4", "j5", "j6"});

  // The commits are the cluster's: replicated, with a leader per partition.
  const auto offsets = c.await_full_isr("__consumer_offsets", c.node(2));
  CHECK(offsets.replicas == std::vector<int>{1, 2, 3});

  // The coordinator's node dies; another replica of the offsets partition takes over, with every
  // commit the group was answered for.
  const int coordinator = offsets.leader;
  c.node(coordinator).kill();
  const int survivor = coordinator % 3 + 1;
  REQUIRE(c.cli("", {"consume", "jobs", "--group", "workers", "--max-messages", "3"},
                c.node(survivor), &out, &err) == 0);
  CHECK(lines(out) == std::vector<std::string>{"j7", "j8", "j9"});
  const int third = 6 - coordinator - survivor;
  REQUIRE(c.cli("", {"consume", "jobs", "--group", "workers", "--max-messages", "2"}, c.node(third),
                &out, &err) == 0);
  CHECK(lines(out) == std::vector<std::string>{"j10", "j11"});
  // Every node's groups, merged: the group lives at its new coordinator now.
  REQUIRE(c.cli("", {"groups", "list"}, c.node(third), &out, &err) == 0);
  CHECK(lines(out) == std::vector<std::string>{"workers"});
}

TEST_CASE("__consumer_offsets is the cluster's to create: a client's createTopic of it is refused",
          "[system][cluster][groups]") {
  node_cluster c(binary, 0);
  std::string out, err;
  CHECK(c.cli("", {"topic", "create", "__consumer_offsets"}, c.node(2), &out, &err) != 0);
  CHECK(err.find("INVALID_REQUEST") != std::string::npos);
  CHECK(err.find("internal topic") != std::string::npos);
}
