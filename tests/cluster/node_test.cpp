// In-process nodes (actors/node/node.hpp) on ephemeral ports: start-up, the data-dir claim
// (lock and meta.properties), and what survives a restart.

#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <future>

#include "actors/node/data_dir.hpp"
#include "actors/node/node.hpp"
#include "runtime/client/cluster_client.hpp"
#include "runtime/cluster/metadata_store.hpp"
#include "tests/support/log_builder.hpp"
#include "tests/support/loopback_node.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace capstan::test;

TEST_CASE("a node starts on ephemeral ports, creates __consumer_offsets and stops",
          "[cluster][node]") {
  temp_dir dir;
  auto n = node::start(loopback_node_config(dir.path()));
  INFO((n ? std::string() : n.err().to_string()));
  REQUIRE(n);
  CHECK((*n)->rpc_port() != 0);
  CHECK((*n)->metrics_port() != 0);
  CHECK((*n)->cluster_port() != 0);
  {
    auto client = connect_client(**n);
    auto md = client->metadata();
    REQUIRE(md);
    CHECK(md->controller_id == 1);
    REQUIRE(md->brokers.size() == 1);
    CHECK(md->brokers[0].port == (*n)->rpc_port());
    CHECK(md->topics.count("__consumer_offsets") == 1);
  }
  (*n)->stop();
  (*n)->stop();
  auto meta = read_meta_properties(dir.path());
  REQUIRE(meta);
  REQUIRE(*meta);
  CHECK((*meta)->node_id == 1);
  CHECK(std::filesystem::exists(dir / metadata_store_file));
}

TEST_CASE("a second node on a data dir in use is refused", "[cluster][node]") {
  temp_dir dir;
  auto first = node::start(loopback_node_config(dir.path()));
  REQUIRE(first);
  auto second = node::start(loopback_node_config(dir.path()));
  REQUIRE_FALSE(second);
  CHECK(second.err().message.find("in use by another capstan node") != std::string::npos);
  (*first)->stop();
  auto third = node::start(loopback_node_config(dir.path()));
  CHECK(third);
}

TEST_CASE("a data dir of another node id or cluster is refused", "[cluster][node]") {
  temp_dir dir;
  std::string cluster;
  {
    auto n = node::start(loopback_node_config(dir.path(), 1));
    REQUIRE(n);
  }
  auto meta = read_meta_properties(dir.path());
  REQUIRE(meta);
  REQUIRE(*meta);
  auto other_node = node::start(loopback_node_config(dir.path(), 2));
  REQUIRE_FALSE(other_node);
  CHECK(other_node.code() == errc::invalid_config);
  CHECK(other_node.err().message.find("belongs to node 1, not node 2") != std::string::npos);
  auto c = loopback_node_config(dir.path(), 1);
  c.cluster_id = "AnotherClusterIdAAAAAA";
  auto other_cluster = node::start(c);
  REQUIRE_FALSE(other_cluster);
  CHECK(other_cluster.err().message.find((*meta)->cluster_id) != std::string::npos);
  c.cluster_id = (*meta)->cluster_id;
  CHECK(node::start(c));
}

TEST_CASE("a restarted node keeps its topics, their ids and their records", "[cluster][node]") {
  temp_dir dir;
  topic_id id{};
  {
    auto n = node::start(loopback_node_config(dir.path()));
    REQUIRE(n);
    auto client = connect_client(**n);
    auto created = client->create_topic(topic_spec{"orders", 2, 1, {{"retention.ms", "-1"}}});
    INFO((created ? std::string() : created.err().to_string()));
    REQUIRE(created);
    id = created->id;
    auto produced = client->produce_sync("orders", 1, -1, make_batch(3, "r", 1000));
    INFO((produced ? std::string() : produced.err().to_string()));
    REQUIRE(produced);
    CHECK(produced->base_offset == offset{0});
    client.reset();
    (*n)->stop();
  }
  auto n = node::start(loopback_node_config(dir.path()));
  REQUIRE(n);
  auto client = connect_client(**n);
  auto md = client->metadata();
  REQUIRE(md);
  REQUIRE(md->topics.count("orders") == 1);
  CHECK(md->topics.at("orders").id == id);
  CHECK(md->topics.at("orders").partitions.size() == 2);
  auto end = client->list_offsets("orders", 1, -1);
  REQUIRE(end);
  CHECK(*end == 3);
  auto configs = client->describe_configs("orders");
  REQUIRE(configs);
  CHECK(configs->at("retention.ms") == "-1");
}

TEST_CASE("a topic whose partitions cannot all be opened is not created, and the error names them",
          "[cluster][node]") {
  temp_dir dir;
  auto n = node::start(loopback_node_config(dir.path()));
  REQUIRE(n);
  // A file where orders-1's directory should go: that partition cannot be opened.
  { std::ofstream blocker(dir / "orders-1"); }
  auto client = connect_client(**n);
  auto created = client->create_topic(topic_spec{"orders", 3, 1, {}});
  REQUIRE_FALSE(created);
  INFO(created.err().to_string());
  CHECK(created.code() == errc::kafka_storage_error);
  CHECK(created.err().message.find("partition(s) 1 of topic 'orders'") != std::string::npos);

  // Rolled back: not listed, not served, the partitions that did open are gone from disk, and
  // the restarted node does not bring it back.
  auto md = client->metadata();
  REQUIRE(md);
  CHECK(md->topics.count("orders") == 0);
  CHECK_FALSE(std::filesystem::exists(dir / "orders-0"));
  CHECK_FALSE(std::filesystem::exists(dir / "orders-2"));
  CHECK(std::filesystem::is_regular_file(dir / "orders-1"));
  client.reset();
  (*n)->stop();
  std::filesystem::remove(dir / "orders-1");
  n = node::start(loopback_node_config(dir.path()));
  REQUIRE(n);
  client = connect_client(**n);
  md = client->metadata();
  REQUIRE(md);
  CHECK(md->topics.count("orders") == 0);
  auto again = client->create_topic(topic_spec{"orders", 3, 1, {}});
  INFO((again ? std::string() : again.err().to_string()));
  CHECK(again);
}

TEST_CASE("a client gets the admin and produce refusals by their Kafka names", "[cluster][node]") {
  temp_dir dir;
  auto config = loopback_node_config(dir.path());
  config.max_broker_partitions = 8; // __consumer_offsets takes one
  auto n = node::start(config);
  REQUIRE(n);
  auto client = connect_client(**n);

  CHECK(client->create_topic(topic_spec{"t", 0, 1, {}}).code() == errc::invalid_partitions);
  CHECK(client->create_topic(topic_spec{"t", 10001, 1, {}}).code() == errc::policy_violation);
  auto crowded = client->create_topic(topic_spec{"t", 8, 1, {}});
  REQUIRE_FALSE(crowded);
  CHECK(crowded.code() == errc::policy_violation);
  CHECK(crowded.err().message.find("max.broker.partitions") != std::string::npos);
  auto tiny = client->create_topic(topic_spec{"t", 1, 1, {{"segment.bytes", "14"}}});
  REQUIRE_FALSE(tiny);
  CHECK(tiny.code() == errc::invalid_config);
  CHECK(tiny.err().message.find("segment.bytes") != std::string::npos);

  REQUIRE(client->create_topic(topic_spec{"t", 7, 1, {}}));
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
  const int64_t ten_years_ms = 3650LL * 24 * 3600000;
  auto future = client->produce_sync("t", 0, -1, make_batch(1, "f", now + ten_years_ms));
  REQUIRE_FALSE(future);
  CHECK(future.code() == errc::invalid_timestamp);
  CHECK(client->produce_sync("t", 0, -1, make_batch(1, "ok", now)));
}

TEST_CASE("stopping a node fails the calls in flight instead of finishing them", "[cluster][node]") {
  using namespace std::chrono_literals;
  temp_dir dir;
  auto n = node::start(loopback_node_config(dir.path()));
  REQUIRE(n);
  auto client = connect_client(**n);
  REQUIRE(client->create_topic(topic_spec{"t", 1, 1, {}}));
  // A fetch at the log end that may wait a minute: finishing it would answer it, empty, then.
  std::promise<result<client::fetch_response>> answered;
  auto fetched = answered.get_future();
  client->fetch("t", 0, offset{0}, leader_epoch{-1}, 1 << 20, 1, 60000,
                std::chrono::steady_clock::now(),
                [&answered](result<client::fetch_response> r) { answered.set_value(std::move(r)); });
  CHECK(fetched.wait_for(300ms) == std::future_status::timeout);
  (*n)->stop();
  REQUIRE(fetched.wait_for(30s) == std::future_status::ready);
  auto r = fetched.get();
  CHECK_FALSE(r);
}
