// In-process nodes (actors/node/node.hpp) on ephemeral ports: start-up, the data-dir claim
// (lock and meta.properties), and what survives a restart.

#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <future>

#include "actors/node/controller_quorum.hpp"
#include "actors/node/data_dir.hpp"
#include "actors/node/node.hpp"
#include "actors/node/single_node_import.hpp"
#include "runtime/client/cluster_client.hpp"
#include "runtime/cluster/metadata_store.hpp"
#include "tests/support/log_builder.hpp"
#include "tests/support/loopback_node.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace capstan::test;

TEST_CASE("a node starts on ephemeral ports, creates __consumer_offsets on a group's first "
          "commit and stops",
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
    // The cluster's, created by its controller when a group first needs it (docs/groups.md).
    CHECK(md->topics.count("__consumer_offsets") == 0);
    auto committed =
        client->commit_offsets("g", {client::committed_offset{"t", 0, 5, {}, errc::none, -1}}, {});
    INFO((committed ? std::string() : committed.err().to_string()));
    REQUIRE(committed);
    auto fetched = client->fetch_offsets("g", {{"t", 0}});
    REQUIRE(fetched);
    REQUIRE(fetched->size() == 1);
    CHECK((*fetched)[0].offset == 5);
    md = client->metadata();
    REQUIRE(md);
    REQUIRE(md->topics.count("__consumer_offsets") == 1);
    CHECK(md->topics.at("__consumer_offsets").internal);
    CHECK(md->topics.at("__consumer_offsets").partitions.at(0).replicas == std::vector<int32_t>{1});
    CHECK(std::filesystem::is_directory(dir / "__consumer_offsets-0"));
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

// Starts a node on `dir`, creates "orders" (2 partitions, retention.ms -1), writes 3 records to
// partition 1 and stops the node; the topic's id.
static topic_id make_orders(const std::filesystem::path& dir) {
  auto n = node::start(loopback_node_config(dir));
  REQUIRE(n);
  auto client = connect_client(**n);
  auto created = client->create_topic(topic_spec{"orders", 2, 1, {{"retention.ms", "-1"}}});
  INFO((created ? std::string() : created.err().to_string()));
  REQUIRE(created);
  auto produced = client->produce_sync("orders", 1, -1, make_batch(3, "r", 1000));
  INFO((produced ? std::string() : produced.err().to_string()));
  REQUIRE(produced);
  CHECK(produced->base_offset == offset{0});
  client.reset();
  (*n)->stop();
  return created->id;
}

// "orders" as make_orders left it, through `client`: its id, partitions, records and configs.
static void check_orders(client::cluster_client& client, const topic_id& id) {
  auto md = client.metadata();
  REQUIRE(md);
  REQUIRE(md->topics.count("orders") == 1);
  CHECK(md->topics.at("orders").id == id);
  REQUIRE(md->topics.at("orders").partitions.size() == 2);
  auto end = client.list_offsets("orders", 1, -1);
  REQUIRE(end);
  CHECK(*end == 3);
  auto configs = client.describe_configs("orders");
  REQUIRE(configs);
  CHECK(configs->at("retention.ms") == "-1");
}

TEST_CASE("a restarted node keeps its topics, their ids and their records", "[cluster][node]") {
  temp_dir dir;
  const auto id = make_orders(dir.path());
  auto n = node::start(loopback_node_config(dir.path()));
  REQUIRE(n);
  check_orders(*connect_client(**n), id);
}

// A data dir as a single node of an earlier version left it: its topics in the metadata store, no
// Raft files. Built from one this version made, by moving its topic back into the store.
static void make_pre_quorum_data_dir(const std::filesystem::path& dir, const topic_id& id,
                                     bool crashed_after_staging) {
  auto store = read_metadata_store(dir / metadata_store_file);
  REQUIRE(store);
  topic_metadata orders{"orders", id, false, {}, {{"retention.ms", "-1"}}};
  orders.partitions.push_back(partition_assignment{0, {1}, 1, 0, {1}, {}});
  orders.partitions.push_back(partition_assignment{1, {1}, 1, 2, {1}, {}});
  store->topics["orders"] = orders;
  store->next_producer_id = 5000;
  REQUIRE(write_metadata_store(dir / metadata_store_file, *store));
  // A crash after the node staged the import but before it stripped the store.
  if (crashed_after_staging) REQUIRE(write_metadata_store(dir / single_node_import_file, *store));
  std::filesystem::remove_all(dir / cluster_metadata_dir);
  std::filesystem::remove(dir / "node.incarnation");
  std::filesystem::remove(dir / "clean-shutdown");
}

TEST_CASE("a single node's data dir from before it ran a controller quorum keeps its topics, "
          "ids, records and producer ids, also after a crash mid-way",
          "[cluster][node]") {
  for (bool crashed : {false, true}) {
    INFO("crashed after staging: " << crashed);
    temp_dir dir;
    const auto id = make_orders(dir.path());
    make_pre_quorum_data_dir(dir.path(), id, crashed);
    for (int start = 0; start < 2; ++start) {
      auto n = node::start(loopback_node_config(dir.path()));
      INFO((n ? std::string() : n.err().to_string()));
      REQUIRE(n);
      auto client = connect_client(**n);
      check_orders(*client, id);
      // Never below the store's: a controlled shutdown and the next election each add one.
      auto md = client->metadata();
      REQUIRE(md);
      CHECK(md->topics.at("orders").partitions[1].leader_epoch >= 2);
      // The store's ids were handed out: the controller's blocks start after them.
      auto pid = client->init_producer_id();
      REQUIRE(pid);
      CHECK(pid->producer_id >= 5000);
      CHECK_FALSE(std::filesystem::exists(dir / single_node_import_file));
      auto store = read_metadata_store(dir / metadata_store_file);
      REQUIRE(store);
      CHECK(store->topics.count("orders") == 0);
      client.reset();
      (*n)->stop();
    }
  }
}

// Before group offsets were the cluster's, every node kept its own __consumer_offsets in its
// metadata store. A single node's becomes the cluster's, commits and all.
TEST_CASE("a single node's node-local __consumer_offsets of an earlier version becomes the "
          "cluster's, with its groups' commits",
          "[cluster][node][groups]") {
  temp_dir dir;
  topic_id id{};
  {
    auto n = node::start(loopback_node_config(dir.path()));
    REQUIRE(n);
    auto client = connect_client(**n);
    REQUIRE(client->commit_offsets("g", {client::committed_offset{"t", 0, 7, "m", errc::none, 3}}, {}));
    auto md = client->metadata();
    REQUIRE(md);
    id = md->topics.at("__consumer_offsets").id;
    client.reset();
    (*n)->stop();
  }
  auto store = read_metadata_store(dir / metadata_store_file);
  REQUIRE(store);
  topic_metadata offsets{"__consumer_offsets", id, true, {}, {{"cleanup.policy", "compact"}}};
  offsets.partitions.push_back(partition_assignment{0, {1}, 1, 0, {1}, {}});
  store->topics["__consumer_offsets"] = offsets;
  REQUIRE(write_metadata_store(dir / metadata_store_file, *store));
  std::filesystem::remove_all(dir / cluster_metadata_dir);
  std::filesystem::remove(dir / "node.incarnation");
  std::filesystem::remove(dir / "clean-shutdown");

  auto n = node::start(loopback_node_config(dir.path()));
  INFO((n ? std::string() : n.err().to_string()));
  REQUIRE(n);
  auto client = connect_client(**n);
  auto fetched = client->fetch_offsets("g", {{"t", 0}});
  INFO((fetched ? std::string() : fetched.err().to_string()));
  REQUIRE(fetched);
  REQUIRE(fetched->size() == 1);
  CHECK((*fetched)[0].offset == 7);
  CHECK((*fetched)[0].metadata == "m");
  auto md = client->metadata();
  REQUIRE(md);
  CHECK(md->topics.at("__consumer_offsets").id == id);
  auto after = read_metadata_store(dir / metadata_store_file);
  REQUIRE(after);
  CHECK(after->topics.empty());
}

// A node of a multi-node cluster cannot hand its own over: each node's had its own topic id.
TEST_CASE("a node of a multi-node cluster that holds a node-local __consumer_offsets of an "
          "earlier version is refused, naming what to move",
          "[cluster][node][groups]") {
  temp_dir dir;
  cluster_metadata md;
  md.cluster_id = "c";
  REQUIRE(write_metadata_store(dir / metadata_store_file, md));
  CHECK(refuse_node_local_offsets(dir.path(), node_id{2}));
  topic_metadata offsets{"__consumer_offsets", {}, true, {}, {}};
  offsets.id[0] = 9;
  offsets.partitions.push_back(partition_assignment{0, {2}, 2, 0, {2}, {}});
  md.topics["__consumer_offsets"] = offsets;
  REQUIRE(write_metadata_store(dir / metadata_store_file, md));
  auto refused = refuse_node_local_offsets(dir.path(), node_id{2});
  REQUIRE_FALSE(refused);
  CHECK(refused.code() == errc::invalid_config);
  CHECK(refused.err().message.find("node 2 holds a node-local __consumer_offsets") !=
        std::string::npos);
  CHECK(refused.err().message.find("Group offsets from an earlier version") != std::string::npos);
}

TEST_CASE("a partition that cannot be opened serves once the node restarts with the way clear",
          "[cluster][node]") {
  temp_dir dir;
  auto n = node::start(loopback_node_config(dir.path()));
  REQUIRE(n);
  // A file where orders-1's directory should go: that partition cannot be opened.
  { std::ofstream blocker(dir / "orders-1"); }
  auto client = connect_client(**n);
  REQUIRE(client->create_topic(topic_spec{"orders", 3, 1, {}}));
  REQUIRE(client->produce_sync("orders", 0, -1, make_batch(1, "r", 1000)));
  auto blocked = client->produce_sync("orders", 1, -1, make_batch(1, "r", 1000));
  REQUIRE_FALSE(blocked);
  CHECK(blocked.code() == errc::kafka_storage_error);
  CHECK(std::filesystem::is_regular_file(dir / "orders-1"));
  client.reset();
  (*n)->stop();
  std::filesystem::remove(dir / "orders-1");
  n = node::start(loopback_node_config(dir.path()));
  REQUIRE(n);
  client = connect_client(**n);
  auto produced = client->produce_sync("orders", 1, -1, make_batch(1, "r", 1000));
  INFO((produced ? std::string() : produced.err().to_string()));
  CHECK(produced);
  auto end = client->list_offsets("orders", 0, -1);
  REQUIRE(end);
  CHECK(*end == 1);
}

TEST_CASE("a client gets the admin and produce refusals by their Kafka names", "[cluster][node]") {
  temp_dir dir;
  auto config = loopback_node_config(dir.path());
  config.max_broker_partitions = 8; // the controller's partitions; __consumer_offsets is the node's
  auto n = node::start(config);
  REQUIRE(n);
  auto client = connect_client(**n);

  CHECK(client->create_topic(topic_spec{"t", 0, 1, {}}).code() == errc::invalid_partitions);
  CHECK(client->create_topic(topic_spec{"t", 10001, 1, {}}).code() == errc::policy_violation);
  auto crowded = client->create_topic(topic_spec{"t", 9, 1, {}});
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

TEST_CASE("stopping a node answers the calls in flight at once instead of finishing their waits",
          "[cluster][node]") {
  using namespace std::chrono_literals;
  temp_dir dir;
  auto n = node::start(loopback_node_config(dir.path()));
  REQUIRE(n);
  auto client = connect_client(**n);
  REQUIRE(client->create_topic(topic_spec{"t", 1, 1, {}}));
  // A produce retries until the new partition has its leader, which the fetch below does not
  // wait for (it may not retry at all).
  REQUIRE(client->produce_sync("t", 0, -1, make_batch(1, "r", 1000)));
  // A fetch at the log end that may wait a minute: finishing it would answer it, empty, then.
  std::promise<result<client::fetch_response>> answered;
  auto fetched = answered.get_future();
  client->fetch(
      "t", 0, offset{1}, leader_epoch{-1}, 1 << 20, 1, 60000, std::chrono::steady_clock::now(),
      [&answered](result<client::fetch_response> r) { answered.set_value(std::move(r)); });
  if (fetched.wait_for(300ms) == std::future_status::ready) {
    auto early = fetched.get();
    FAIL("answered early: " << (early ? std::string("ok") : early.err().to_string()));
  }
  (*n)->stop();
  REQUIRE(fetched.wait_for(30s) == std::future_status::ready);
  // Failed, or answered with nothing when the controlled shutdown moved the leadership first (a
  // leader that steps down answers its parked fetches with what is below the HW).
  auto r = fetched.get();
  if (r) CHECK(r->records.empty());
}
