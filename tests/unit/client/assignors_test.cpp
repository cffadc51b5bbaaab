// The group leader's assignors: Kafka's range and roundrobin layouts, and cooperative-sticky's
// promises (balance, partitions kept where they are, a moved partition withheld for a generation).

#include <catch2/catch.hpp>

#include <set>

#include "runtime/client/assignors.hpp"

using namespace capstan;
using namespace capstan::client;

namespace {

assignor_member member(std::string id, std::vector<std::string> topics, topic_partitions owned = {},
                       int32_t generation = -1, std::string instance = {}) {
  return assignor_member{std::move(id), std::move(instance),
                         consumer_subscription{std::move(topics), {}, std::move(owned), generation}};
}

size_t count(const topic_partitions& tps) {
  size_t n = 0;
  for (const auto& [t, ps] : tps) n += ps.size();
  return n;
}

// Every (topic, partition) given to exactly one member, or to none when `withheld`.
void check_disjoint(const group_assignment& a, const partition_counts& counts, bool complete = true) {
  std::set<std::pair<std::string, int32_t>> seen;
  for (const auto& [m, tps] : a)
    for (const auto& [t, ps] : tps)
      for (auto p : ps) {
        CHECK(seen.insert({t, p}).second);
        CHECK(p < counts.at(t));
      }
  if (!complete) return;
  size_t total = 0;
  for (const auto& [t, n] : counts) total += static_cast<size_t>(n);
  CHECK(seen.size() == total);
}

} // namespace

TEST_CASE("range gives each member a consecutive range per topic, the first ones one more",
          "[unit][client][groups]") {
  const partition_counts counts{{"a", 7}, {"b", 2}};
  auto a = assign_range({member("m2", {"a", "b"}), member("m1", {"a", "b"}), member("m3", {"a"})}, counts);
  CHECK(a["m1"] == topic_partitions{{"a", {0, 1, 2}}, {"b", {0}}});
  CHECK(a["m2"] == topic_partitions{{"a", {3, 4}}, {"b", {1}}});
  CHECK(a["m3"] == topic_partitions{{"a", {5, 6}}});
  check_disjoint(a, counts);
}

TEST_CASE("roundrobin deals the sorted partitions in turn, skipping members not subscribed",
          "[unit][client][groups]") {
  const partition_counts counts{{"a", 3}, {"b", 2}};
  auto a = assign_roundrobin({member("m1", {"a", "b"}), member("m2", {"b"})}, counts);
  // Kafka's circular iterator: m2 skipped for each of a's, then dealt b-0, then m1 b-1.
  CHECK(a["m1"] == topic_partitions{{"a", {0, 1, 2}}, {"b", {1}}});
  CHECK(a["m2"] == topic_partitions{{"b", {0}}});
  a = assign_roundrobin({member("m1", {"a", "b"}), member("m2", {"a", "b"})}, counts);
  CHECK(a["m1"] == topic_partitions{{"a", {0, 2}}, {"b", {1}}});
  CHECK(a["m2"] == topic_partitions{{"a", {1}}, {"b", {0}}});
}

TEST_CASE("static members sort by instance id, so a restart under a new member id keeps its range",
          "[unit][client][groups]") {
  const partition_counts counts{{"a", 4}};
  auto before = assign_range({member("x-1", {"a"}, {}, -1, "i1"), member("y-1", {"a"}, {}, -1, "i2")}, counts);
  auto after = assign_range({member("z-9", {"a"}, {}, -1, "i1"), member("y-1", {"a"}, {}, -1, "i2")}, counts);
  CHECK(before["x-1"] == after["z-9"]);
}

TEST_CASE("cooperative-sticky balances, keeps what members own, and withholds what moves for a "
          "generation",
          "[unit][client][groups]") {
  const partition_counts counts{{"t", 6}};
  // One member owns everything; a second joins.
  auto first = assign_cooperative_sticky({member("a", {"t"}, {{"t", {0, 1, 2, 3, 4, 5}}}, 1), member("b", {"t"})},
                                         counts);
  // a keeps three of its own and b gets nothing yet: the three that move are still a's.
  CHECK(count(first["a"]) == 3);
  CHECK(first["b"].empty());
  check_disjoint(first, counts, false);

  // a revoked them and rejoined: the next generation hands them to b.
  auto second = assign_cooperative_sticky({member("a", {"t"}, first["a"], 2), member("b", {"t"}, {}, 2)}, counts);
  CHECK(second["a"] == first["a"]);
  CHECK(count(second["b"]) == 3);
  check_disjoint(second, counts);

  // A third member: each keeps two of its own, nothing else moves.
  auto third = assign_cooperative_sticky(
      {member("a", {"t"}, second["a"], 3), member("b", {"t"}, second["b"], 3), member("c", {"t"})}, counts);
  CHECK(count(third["a"]) == 2);
  CHECK(count(third["b"]) == 2);
  for (const auto& [m, tps] : third)
    for (auto p : tps.count("t") ? tps.at("t") : std::vector<int32_t>{}) {
      const auto& was = m == "a" ? second["a"]["t"] : second["b"]["t"];
      CHECK(std::find(was.begin(), was.end(), p) != was.end());
    }
}

TEST_CASE("cooperative-sticky drops claims that no longer hold and settles a double claim by "
          "generation",
          "[unit][client][groups]") {
  const partition_counts counts{{"t", 2}};
  // b's claim of t-0 is from an older generation than a's; t-7 does not exist; c claims a topic
  // it no longer subscribes to.
  auto a = assign_cooperative_sticky({member("a", {"t"}, {{"t", {0}}}, 5), member("b", {"t"}, {{"t", {0, 7}}}, 4),
                                      member("c", {"t"}, {{"gone", {0}}}, 5)},
                                     counts);
  CHECK(a["a"] == topic_partitions{{"t", {0}}});
  check_disjoint(a, counts);
  // Members that subscribe to different topics each get only their own.
  auto b = assign_cooperative_sticky({member("a", {"t"}), member("b", {"u"})}, {{"t", 2}, {"u", 1}});
  CHECK(b["a"] == topic_partitions{{"t", {0, 1}}});
  CHECK(b["b"] == topic_partitions{{"u", {0}}});
}

TEST_CASE("the assignors are found by their Kafka names", "[unit][client][groups]") {
  REQUIRE(find_assignor("range"));
  CHECK(find_assignor("range")->protocol == rebalance_protocol::eager);
  CHECK(find_assignor("cooperative-sticky")->protocol == rebalance_protocol::cooperative);
  CHECK(find_assignor("sticky") == nullptr);
  CHECK(assignor_names() == "range, roundrobin, cooperative-sticky");
}
