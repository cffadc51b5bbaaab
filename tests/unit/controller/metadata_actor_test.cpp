// The metadata actor: a node's own metadata as its store holds it (what the gateway answers
// before the controller's first UpdateMetadata).

#include <catch2/catch.hpp>

#include <caf/all.hpp>

#include "actors/controller/metadata_actor_spawn.hpp"
#include "runtime/actor/caf_error.hpp"
#include "runtime/cluster/metadata_store.hpp"
#include "tests/support/caf_fixture.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace capstan::test;

namespace {

errc code_of(const caf::error& e) { return from_caf_error(e).code; }

struct metadata_fixture : threaded_system {
  temp_dir dir;

  metadata_actor_options options() {
    metadata_actor_options o;
    o.store_file = dir / metadata_store_file;
    o.cluster_id = "cluster-a";
    o.node_id = 1;
    o.log_defaults.retention_ms = 1000;
    o.min_insync_replicas = 1;
    o.live_brokers = [] { return std::vector<broker_info>{broker_info{1, "127.0.0.1", 9000}}; };
    return o;
  }

  // A store as an earlier version's node left it, with "orders" (2 partitions, segment.bytes).
  topic_id write_orders() {
    cluster_metadata md;
    md.cluster_id = "cluster-a";
    topic_metadata t{"orders", {}, false, {}, {{"segment.bytes", "1048576"}}};
    t.id[0] = 7;
    t.partitions.push_back(partition_assignment{0, {1}, 1, 0, {1}, {}});
    t.partitions.push_back(partition_assignment{1, {1}, 1, 0, {1}, {}});
    md.topics.emplace(t.name, t);
    REQUIRE(write_metadata_store(dir / metadata_store_file, md));
    return t.id;
  }

  template <class... Rs, class Handle, class... Ts>
  auto request(const Handle& dest, Ts&&... xs) {
    return threaded_system::request<Rs...>(dest, std::chrono::seconds(30), std::forward<Ts>(xs)...);
  }

  metadata_actor start() {
    auto meta = spawn_metadata_actor(sys(), options());
    REQUIRE(meta);
    track(*meta);
    return *meta;
  }
};

} // namespace

TEST_CASE_METHOD(metadata_fixture, "describe overlays topic overrides on the broker defaults",
                 "[controller][metadata]") {
  write_orders();
  auto meta = start();
  auto configs = request<config_map>(meta, describe_atom_v, std::string("orders"));
  REQUIRE(configs);
  CHECK(configs->at("segment.bytes") == "1048576");
  CHECK(configs->at("retention.ms") == "1000");
  CHECK(configs->at("cleanup.policy") == "delete");
  CHECK(configs->at("min.insync.replicas") == "1");
  auto missing = request<config_map>(meta, describe_atom_v, std::string("nope"));
  REQUIRE_FALSE(missing);
  CHECK(code_of(missing.error()) == errc::unknown_topic_or_partition);
}

TEST_CASE_METHOD(metadata_fixture, "the metadata actor serves its store's topics with the live "
                                   "brokers, a new store takes the cluster id, another cluster's is refused",
                 "[controller][metadata]") {
  {
    auto meta = start();
    auto snap = request<metadata_snapshot>(meta, snapshot_atom_v);
    REQUIRE(snap);
    CHECK((*snap)->topics.empty());
    CHECK((*snap)->cluster_id == "cluster-a");
    auto stored = read_metadata_store(dir / metadata_store_file);
    REQUIRE(stored);
    CHECK(stored->cluster_id == "cluster-a");
    caf::anon_send_exit(meta, caf::exit_reason::user_shutdown);
  }
  const auto id = write_orders();
  auto meta = start();
  auto snap = request<metadata_snapshot>(meta, snapshot_atom_v);
  REQUIRE(snap);
  REQUIRE((*snap)->topics.count("orders") == 1);
  CHECK((*snap)->topics.at("orders").id == id);
  CHECK((*snap)->topics.at("orders").partitions.size() == 2);
  REQUIRE((*snap)->brokers.size() == 1);
  CHECK((*snap)->brokers[0].port == 9000);

  auto other = options();
  other.cluster_id = "cluster-b";
  auto refused = spawn_metadata_actor(sys(), other);
  REQUIRE_FALSE(refused);
  CHECK(refused.code() == errc::kafka_storage_error);
  CHECK(refused.err().message.find("cluster-a") != std::string::npos);
}
