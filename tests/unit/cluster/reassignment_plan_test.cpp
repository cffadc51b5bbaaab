// What `capstan topic reassign` asks for: a node's replicas handed to another in place, one target
// for a topic's partitions, and what it refuses before asking.

#include <catch2/catch.hpp>

#include "runtime/cluster/reassignment_plan.hpp"

using namespace capstan;

namespace {

cluster_metadata two_topics() {
  cluster_metadata md;
  topic_metadata orders{"orders", {}, false, {}, {}};
  orders.partitions.push_back(partition_assignment{0, {1, 2, 3}, 1, 0, {1, 2, 3}, {}});
  orders.partitions.push_back(partition_assignment{1, {3, 1, 2}, 3, 0, {3, 1, 2}, {}});
  orders.partitions.push_back(partition_assignment{2, {1, 2, 4}, 1, 0, {1, 2, 4}, {}});
  md.topics["orders"] = orders;
  topic_metadata logs{"logs", {}, false, {}, {}};
  logs.partitions.push_back(partition_assignment{0, {2, 3}, 2, 0, {2, 3}, {}});
  md.topics["logs"] = logs;
  return md;
}

} // namespace

TEST_CASE("a node's replicas are handed to another in the same place of each replica list",
          "[cluster][reassign]") {
  const auto md = two_topics();
  auto plan = plan_node_replacement(md, std::nullopt, 3, 5);
  REQUIRE(plan);
  REQUIRE(plan->size() == 3);
  CHECK((*plan)[0].topic == "logs");
  CHECK((*plan)[0].replicas == std::vector<int32_t>{2, 5});
  CHECK((*plan)[1].topic == "orders");
  CHECK((*plan)[1].partition == 0);
  CHECK((*plan)[1].replicas == std::vector<int32_t>{1, 2, 5});
  CHECK((*plan)[2].partition == 1);
  CHECK((*plan)[2].replicas == std::vector<int32_t>{5, 1, 2});

  plan = plan_node_replacement(md, std::string("logs"), 3, 5);
  REQUIRE(plan);
  CHECK(plan->size() == 1);
  plan = plan_node_replacement(md, std::nullopt, 9, 5);
  REQUIRE(plan);
  CHECK(plan->empty());
}

TEST_CASE("a replacement that would leave a partition a replica short, or of a node by itself, "
          "or of an unknown topic is refused",
          "[cluster][reassign]") {
  const auto md = two_topics();
  CHECK(plan_node_replacement(md, std::nullopt, 1, 2).code() == errc::invalid_replica_assignment);
  CHECK(plan_node_replacement(md, std::nullopt, 3, 3).code() == errc::invalid_replica_assignment);
  CHECK(plan_node_replacement(md, std::string("nope"), 3, 5).code() ==
        errc::unknown_topic_or_partition);
}

TEST_CASE("a target goes to one partition or to each of the topic's", "[cluster][reassign]") {
  const auto md = two_topics();
  auto plan = plan_partition_targets(md, "orders", std::nullopt, {4, 5, 6});
  REQUIRE(plan);
  REQUIRE(plan->size() == 3);
  for (const auto& r : *plan) CHECK(r.replicas == std::vector<int32_t>{4, 5, 6});
  plan = plan_partition_targets(md, "orders", 1, {});
  REQUIRE(plan);
  REQUIRE(plan->size() == 1);
  CHECK((*plan)[0].partition == 1);
  CHECK((*plan)[0].replicas.empty()); // a cancel
  CHECK(plan_partition_targets(md, "orders", 7, {1}).code() == errc::unknown_topic_or_partition);
  CHECK(plan_partition_targets(md, "nope", std::nullopt, {1}).code() ==
        errc::unknown_topic_or_partition);
}
