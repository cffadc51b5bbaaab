// `capstan consume --group` processes as members of one group (docs/groups.md, "Consumers in a
// group"): real node processes and real consumer processes, sharing a topic's partitions as
// members join, leave and are killed.

#include <catch2/catch.hpp>

#include <csignal>
#include <map>
#include <memory>
#include <set>
#include <sstream>
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
constexpr int partitions = 6;

// (partition, offset) of each record a consumer printed with --print-partition --print-offset.
std::multiset<std::pair<int, int64_t>> printed(const child_process& p) {
  std::multiset<std::pair<int, int64_t>> out;
  std::istringstream in(p.stdout_text());
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    int partition = -1;
    int64_t offset = -1;
    if (fields >> partition >> offset) out.insert({partition, offset});
  }
  return out;
}

std::set<int> partitions_of(const std::multiset<std::pair<int, int64_t>>& records, int64_t from) {
  std::set<int> out;
  for (const auto& [p, o] : records)
    if (o >= from) out.insert(p);
  return out;
}

struct group_test {
  node_cluster c{binary, 0, "group.initial.rebalance.delay.ms = 0\n"};
  std::vector<std::unique_ptr<child_process>> consumers;

  group_test() { c.create_topic("jobs", 3, c.node(1), partitions); }

  child_process& start_consumer(const std::string& label, int via) {
    consumers.push_back(std::make_unique<child_process>(
        binary,
        std::vector<std::string>{"consume", "jobs", "--group", "g", "--from-beginning", "--print-partition",
                                 "--print-offset", "--bootstrap", c.node(via).bootstrap(), "--consumer-property",
                                 "session.timeout.ms=6000", "--consumer-property", "heartbeat.interval.ms=500"},
        c.dir.path(), label));
    return *consumers.back();
  }

  // Ten records into each partition, acknowledged by every replica.
  void produce_round(int round) {
    std::string out, err;
    for (int p = 0; p < partitions; ++p) {
      std::string input;
      for (int i = 0; i < 10; ++i) input += "r" + std::to_string(round) + "-" + std::to_string(i) + "\n";
      INFO(err);
      REQUIRE(c.cli(input, {"produce", "jobs", "--partition", std::to_string(p), "--acks", "all"}, c.node(1), &out,
                    &err) == 0);
    }
  }

  // The partition counts of the group's members by `groups describe --members` when the group is
  // Stable, sorted; empty otherwise.
  std::vector<int> stable_shares() {
    std::string out, err;
    if (c.cli("", {"groups", "describe", "g", "--state", "--members"}, c.node(2), &out, &err) != 0) return {};
    if (out.find("\tStable\t") == std::string::npos) return {};
    std::vector<int> shares;
    std::istringstream in(out);
    std::string line;
    bool members = false;
    while (std::getline(in, line)) {
      if (line.rfind("GROUP\tMEMBER-ID", 0) == 0) {
        members = true;
        continue;
      }
      if (!members) continue;
      std::vector<std::string> f;
      std::istringstream fields(line);
      for (std::string s; std::getline(fields, s, '\t');) f.push_back(s);
      if (f.size() == 6) shares.push_back(f[4] == "-" ? 0 : std::stoi(f[4]));
    }
    std::sort(shares.begin(), shares.end());
    return shares;
  }
};

} // namespace

TEST_CASE("consume --group processes share a topic's partitions: each read by one member, a third "
          "spreads them, a kill -9'd member's move after the session timeout",
          "[system][cluster][groups]") {
  group_test t;
  auto& a = t.start_consumer("consumer-a", 1);
  auto& b = t.start_consumer("consumer-b", 2);
  REQUIRE(eventually([&] { return t.stable_shares() == std::vector<int>{3, 3}; }, 60s));

  // Round 0: each partition's records printed by exactly one of the two, three partitions each.
  t.produce_round(0);
  REQUIRE(eventually([&] { return printed(a).size() + printed(b).size() >= 60; }, 30s));
  auto pa = partitions_of(printed(a), 0), pb = partitions_of(printed(b), 0);
  CHECK(pa.size() == 3);
  CHECK(pb.size() == 3);
  for (int p : pa) CHECK(pb.count(p) == 0);

  // A third member: two partitions each, and round 1 (offsets 10..19) is read by all three.
  auto& third = t.start_consumer("consumer-c", 3);
  REQUIRE(eventually([&] { return t.stable_shares() == std::vector<int>{2, 2, 2}; }, 60s));
  t.produce_round(1);
  REQUIRE(eventually(
      [&] {
        std::set<std::pair<int, int64_t>> all;
        for (auto* p : {&a, &b, &third})
          for (const auto& r : printed(*p)) all.insert(r);
        return all.size() >= 120;
      },
      30s));
  CHECK(partitions_of(printed(third), 10).size() == 2);

  // The third is killed: after the session timeout the other two hold its partitions, and read
  // round 2 between them.
  third.signal(SIGKILL);
  REQUIRE(eventually([&] { return t.stable_shares() == std::vector<int>{3, 3}; }, 60s));
  t.produce_round(2);
  REQUIRE(eventually(
      [&] { return partitions_of(printed(a), 20).size() + partitions_of(printed(b), 20).size() == 6; }, 30s));

  // Every record was printed, and none twice but a killed member's uncommitted tail.
  std::map<std::pair<int, int64_t>, int> times;
  for (auto* p : {&a, &b, &third})
    for (const auto& r : printed(*p)) ++times[r];
  for (int p = 0; p < partitions; ++p)
    for (int64_t o = 0; o < 30; ++o) {
      INFO("partition " << p << " offset " << o);
      CHECK(times[{p, o}] >= 1);
      if (o < 10 || o >= 20) CHECK(times[{p, o}] == 1);
    }

  // A group with members is not deleted.
  std::string out, err;
  CHECK(t.c.cli("", {"groups", "delete", "g"}, t.c.node(1), &out, &err) == 1);
  CHECK(err.find("GROUP_NOT_EMPTY") != std::string::npos);

  // Ctrl-C leaves the group: the other takes every partition without waiting for a timeout.
  a.signal(SIGINT);
  REQUIRE(a.wait(30s) == 0);
  CHECK(a.stderr_text().find("Processed a total of") != std::string::npos);
  REQUIRE(eventually([&] { return t.stable_shares() == std::vector<int>{6}; }, 30s));
  b.signal(SIGTERM);
  REQUIRE(b.wait(30s) == 0);
  // Now it can be: its commits go with it.
  REQUIRE(t.c.cli("", {"groups", "delete", "g"}, t.c.node(3), &out, &err) == 0);
  REQUIRE(t.c.cli("", {"groups", "describe", "g"}, t.c.node(2), &out, &err) == 0);
  CHECK(out.find("no committed offsets and no active members") != std::string::npos);
}
