// node_config::broker_configs: the node's configuration as a Kafka DescribeConfigs of its broker
// resource shows it (docs/kafka.md, "Topic administration").

#include <catch2/catch.hpp>

#include <map>
#include <optional>
#include <string>

#include "actors/node/node.hpp"

using namespace capstan;

namespace {

std::map<std::string, broker_config_entry> by_name(const node_config& c) {
  std::map<std::string, broker_config_entry> out;
  for (const auto& e : c.broker_configs()) out.emplace(e.name, e);
  return out;
}

} // namespace

TEST_CASE("broker configs name every known key once, sorted, each with Kafka's text of its value",
          "[node][config]") {
  const node_config defaults;
  const auto entries = defaults.broker_configs();
  const auto known = node_config::known_keys();
  REQUIRE(entries.size() == known.size());
  auto key = known.begin();
  for (const auto& e : entries) CHECK(e.name == *key++);

  const auto c = by_name(defaults);
  CHECK(c.at("min.insync.replicas").value == "1");
  CHECK(c.at("queued.max.request.bytes.per.connection").value ==
        std::to_string(defaults.client_limits.queued_max_request_bytes_per_connection));
  CHECK(c.at("auto.leader.rebalance.enable").value == "true");
  CHECK(c.at("log.retention.ms").value == "604800000");
  CHECK(c.at("log.retention.hours").value == "168");
  CHECK(c.at("log.cleaner.min.cleanable.ratio").value == "0.5");
  CHECK(c.at("log.cleanup.policy").value == "delete");
  CHECK(c.at("producer.id.expiration.ms").value == "86400000");
  CHECK(c.at("actor.scheduler.policy").value == "work-stealing");
  CHECK(c.at("listeners").value == "PLAINTEXT://127.0.0.1:9092,CAPSTAN://127.0.0.1:9192");
  CHECK(c.at("advertised.listeners").value == std::nullopt);
  CHECK(c.at("node.id").value == "1");
  CHECK(c.at("broker.id").value == "1");
  for (const auto& [name, e] : c) {
    INFO(name);
    CHECK(e.source == broker_config_source::default_config);
  }
}

TEST_CASE("keys given in the config file, and their synonyms, are STATIC_BROKER_CONFIG",
          "[node][config]") {
  auto parsed = node_config::from_toml(R"(
broker.id = 7
min.insync.replicas = 2
log.retention.hours = 1
log.cleaner.min.cleanable.ratio = 0.1
listeners = "CAPSTAN://127.0.0.1:19092"
)",
                                       "test.toml", node_config{});
  REQUIRE(parsed);
  const auto c = by_name(*parsed);
  for (const auto* key : {"broker.id", "node.id", "min.insync.replicas", "log.retention.hours",
                          "log.retention.minutes", "log.retention.ms", "listeners"}) {
    INFO(key);
    CHECK(c.at(key).source == broker_config_source::static_broker_config);
  }
  CHECK(c.at("node.id").value == "7");
  CHECK(c.at("min.insync.replicas").value == "2");
  CHECK(c.at("log.retention.ms").value == "3600000");
  CHECK(c.at("log.retention.minutes").value == "60");
  CHECK(c.at("listeners").value == "CAPSTAN://127.0.0.1:19092");
  CHECK(c.at("log.cleaner.min.cleanable.ratio").value == "0.1");
  CHECK(c.at("num.partitions").source == broker_config_source::default_config);
  CHECK(c.at("log.segment.bytes").source == broker_config_source::default_config);
}

TEST_CASE("a coarser unit the setting is not a whole multiple of has no value", "[node][config]") {
  auto parsed = node_config::from_toml("log.retention.ms = 90000\n", "test.toml", node_config{});
  REQUIRE(parsed);
  const auto c = by_name(*parsed);
  CHECK(c.at("log.retention.ms").value == "90000");
  CHECK(c.at("log.retention.minutes").value == std::nullopt);
  CHECK(c.at("log.retention.hours").value == std::nullopt);
}
