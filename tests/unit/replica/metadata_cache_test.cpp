// The metadata cache built from the controller's UpdateMetadata (actors/replica/metadata_cache).

#include <catch2/catch.hpp>

#include "actors/replica/metadata_cache.hpp"

using namespace capstan;

namespace {

std::vector<node_id> nodes(std::initializer_list<int32_t> ids) {
  std::vector<node_id> out;
  for (auto n : ids) out.push_back(node_id{n});
  return out;
}

update_metadata_msg two_topics() {
  update_metadata_msg m;
  m.controller_id = 7;
  m.controller_epoch = 3;
  m.cluster_id = "c1";
  m.nodes.push_back(node_endpoint_msg{node_id{1}, "10.0.0.1", 9192, 9193, ""});
  m.nodes.push_back(node_endpoint_msg{node_id{2}, "10.0.0.2", 9292, 9293, ""});
  topic_config_msg orders{"orders", {}, false, {{"min.insync.replicas", "2"}, {"retention.ms", "1000"}}};
  orders.id[0] = 5;
  m.topics.push_back(orders);
  // Partitions out of order, and one of a topic the update does not list as a topic.
  m.partitions.push_back(partition_state_msg{{"orders", 1}, orders.id, node_id{2}, leader_epoch{4}, nodes({2}), 6, nodes({2, 1}), {}});
  m.partitions.push_back(partition_state_msg{{"orders", 0}, orders.id, node_id{1}, leader_epoch{2}, nodes({1, 2}), 3, nodes({1, 2}), {}});
  m.partitions.push_back(partition_state_msg{{"loose", 0}, {}, node_id{-1}, leader_epoch{0}, {}, 0, nodes({2}), {}});
  return m;
}

} // namespace

TEST_CASE("the metadata cache lists the UpdateMetadata's nodes at their client addresses and every "
          "partition with its leader, leader epoch, replicas and ISR",
          "[replica][metadata_cache]") {
  metadata_cache cache(two_topics(), {});
  const auto& md = cache.cluster();
  CHECK(md.cluster_id == "c1");
  CHECK(md.controller_id == 7);
  CHECK(cache.controller_epoch() == 3);
  REQUIRE(md.brokers.size() == 2);
  CHECK(md.brokers[1].node_id == 2);
  CHECK(md.brokers[1].host == "10.0.0.2");
  CHECK(md.brokers[1].port == 9292);

  REQUIRE(md.topics.count("orders") == 1);
  const auto& orders = md.topics.at("orders");
  CHECK(orders.id[0] == 5);
  CHECK(orders.configs.at("min.insync.replicas") == "2");
  REQUIRE(orders.partitions.size() == 2);
  CHECK(orders.partitions[0].partition == 0);
  CHECK(orders.partitions[0].leader == 1);
  CHECK(orders.partitions[0].leader_epoch == 2);
  CHECK(orders.partitions[0].isr == std::vector<int32_t>{1, 2});
  CHECK(orders.partitions[1].partition == 1);
  CHECK(orders.partitions[1].leader == 2);
  CHECK(orders.partitions[1].leader_epoch == 4);
  CHECK(orders.partitions[1].replicas == std::vector<int32_t>{2, 1});
  CHECK(orders.partitions[1].isr == std::vector<int32_t>{2});

  REQUIRE(md.topics.count("loose") == 1);
  CHECK(md.topics.at("loose").partitions.at(0).leader == -1);
}

TEST_CASE("the metadata cache describes a topic as the node's defaults overlaid with its overrides",
          "[replica][metadata_cache]") {
  metadata_cache cache(two_topics(), {{"retention.ms", "604800000"}, {"min.insync.replicas", "1"}, {"segment.bytes", "42"}});
  auto orders = cache.describe("orders");
  REQUIRE(orders);
  CHECK(orders->at("retention.ms") == "1000");
  CHECK(orders->at("min.insync.replicas") == "2");
  CHECK(orders->at("segment.bytes") == "42");
  auto missing = cache.describe("nope");
  REQUIRE_FALSE(missing);
  CHECK(missing.code() == errc::unknown_topic_or_partition);
}

TEST_CASE("the metadata cache registry holds nothing until a cache is published, then the latest",
          "[replica][metadata_cache]") {
  metadata_cache_registry registry;
  CHECK(registry.current() == nullptr);
  auto first = std::make_shared<const metadata_cache>(two_topics(), std::map<std::string, std::string>{});
  registry.publish(first);
  CHECK(registry.current() == first);
}

TEST_CASE("the metadata cache names a node's leadership with its epoch, for the topic id it holds "
          "only",
          "[replica][metadata_cache]") {
  metadata_cache cache(two_topics(), {});
  topic_id orders{};
  orders[0] = 5;
  CHECK(cache.led_by("orders", orders, 0, node_id{1}) == leader_epoch{2});
  CHECK(cache.led_by("orders", orders, 1, node_id{2}) == leader_epoch{4});
  CHECK_FALSE(cache.led_by("orders", orders, 1, node_id{1}));
  CHECK_FALSE(cache.led_by("orders", orders, 2, node_id{1}));
  CHECK_FALSE(cache.led_by("nope", orders, 0, node_id{1}));
  // A topic deleted and created again under the same name has another id.
  topic_id recreated = orders;
  recreated[1] = 9;
  CHECK_FALSE(cache.led_by("orders", recreated, 0, node_id{1}));
}
