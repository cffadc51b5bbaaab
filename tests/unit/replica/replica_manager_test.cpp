#include <catch2/catch.hpp>

#include <filesystem>

#include <caf/all.hpp>

#include "actors/replica/replica_manager_actor.hpp"
#include "runtime/actor/caf_error.hpp"
#include "runtime/storage/offset_checkpoint.hpp"
#include "tests/support/caf_fixture.hpp"
#include "tests/support/log_builder.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

constexpr caf::timespan timeout = 30s;

errc code_of(const caf::error& e) { return from_caf_error(e).code; }

topic_metadata topic_of(const std::string& name, int32_t partitions, std::vector<int32_t> replicas,
                        uint8_t id, std::map<std::string, std::string> configs = {}) {
  topic_metadata t;
  t.name = name;
  t.id[0] = id;
  t.configs = std::move(configs);
  for (int32_t p = 0; p < partitions; ++p)
    t.partitions.push_back(partition_assignment{p, replicas, replicas.front(), 0, replicas});
  return t;
}

metadata_snapshot snapshot_of(std::vector<topic_metadata> topics) {
  auto m = std::make_shared<cluster_metadata>();
  m->cluster_id = "test";
  m->controller_id = 1;
  m->brokers.push_back(broker_info{1, "127.0.0.1", 9192});
  for (auto& t : topics) m->topics.emplace(t.name, std::move(t));
  return m;
}

struct manager_fixture {
  temp_dir dir{"replica-manager"};
  std::unique_ptr<threaded_system> sys;
  std::shared_ptr<routing_registry> routes;
  replica_manager_actor manager;

  manager_fixture() { start(); }

  void start() {
    sys = std::make_unique<threaded_system>();
    routes = std::make_shared<routing_registry>();
    replica_manager_options opts;
    opts.node = node_id{1};
    opts.data_dir = dir.path();
    opts.schedule_background_work = false;
    auto m = spawn_replica_manager(sys->sys(), opts, routes);
    if (!m) FAIL("spawn failed: " << m.err().to_string());
    manager = *m;
    sys->track(manager);
  }
  // Stops the manager and the whole actor system (no file stays open).
  void stop() {
    auto s = sys->request<bool>(manager, timeout, stop_atom_v);
    REQUIRE(s);
    sys.reset();
  }

  caf::expected<bool> apply(metadata_snapshot snap) {
    return sys->request<bool>(manager, timeout, apply_atom_v, std::move(snap));
  }
  caf::expected<partition_replica_actor> lookup(const std::string& topic, int32_t partition) {
    return sys->request<partition_replica_actor>(manager, timeout, lookup_atom_v, topic, partition);
  }
  caf::expected<produce_result> produce(const partition_replica_actor& r, bytes batch) {
    return sys->request<produce_result>(
      r, timeout, produce_atom_v, produce_request{batch_buffer::of(std::move(batch)), -1, 30000});
  }
};

} // namespace

TEST_CASE("effective config overlays topic overrides and splits off min.insync.replicas",
          "[replica][manager]") {
  log_config defaults;
  defaults.segment_bytes = 1 << 20;
  auto c = effective_replica_config({{"retention.ms", "1000"}, {"min.insync.replicas", "2"}},
                                    defaults, 1);
  REQUIRE(c);
  CHECK(c->log.retention_ms == 1000);
  CHECK(c->log.segment_bytes == 1 << 20);
  CHECK(c->min_insync_replicas == 2);
  auto plain = effective_replica_config({}, defaults, 3);
  REQUIRE(plain);
  CHECK(plain->min_insync_replicas == 3);
  CHECK(effective_replica_config({{"min.insync.replicas", "0"}}, defaults, 1).code() ==
        errc::invalid_config);
  CHECK(effective_replica_config({{"min.insync.replicas", "x"}}, defaults, 1).code() ==
        errc::invalid_config);
  CHECK(effective_replica_config({{"no.such.config", "1"}}, defaults, 1).code() ==
        errc::invalid_config);
}

TEST_CASE("apply opens this node's partitions and publishes them; others are unknown",
          "[replica][manager]") {
  manager_fixture f;
  auto ok = f.apply(snapshot_of({topic_of("t", 2, {1}, 1), topic_of("elsewhere", 1, {2}, 2)}));
  REQUIRE(ok);
  CHECK(*ok);
  REQUIRE(f.lookup("t", 0));
  REQUIRE(f.lookup("t", 1));
  auto missing = f.lookup("elsewhere", 0);
  REQUIRE_FALSE(missing);
  CHECK(code_of(missing.error()) == errc::unknown_topic_or_partition);
  CHECK(code_of(f.lookup("t", 2).error()) == errc::unknown_topic_or_partition);
  CHECK(std::filesystem::is_directory(f.dir / "t-0"));
  CHECK(std::filesystem::is_directory(f.dir / "t-1"));
  CHECK_FALSE(std::filesystem::exists(f.dir / "elsewhere-0"));
  auto table = f.routes->current();
  REQUIRE(table->size() == 2);
  CHECK(table->count({"t", 1}) == 1);
  // Applying the same snapshot again keeps the same replicas.
  auto before = *f.lookup("t", 0);
  REQUIRE(f.apply(snapshot_of({topic_of("t", 2, {1}, 1)})));
  CHECK(*f.lookup("t", 0) == before);
}

TEST_CASE("a topic gone from the snapshot is closed, unrouted and its directories deleted",
          "[replica][manager]") {
  manager_fixture f;
  REQUIRE(f.apply(snapshot_of({topic_of("keep", 1, {1}, 1), topic_of("drop", 2, {1}, 2)})));
  REQUIRE(f.produce(*f.lookup("drop", 0), make_batch(3, "x", 1000)));
  REQUIRE(f.apply(snapshot_of({topic_of("keep", 1, {1}, 1)})));
  CHECK(code_of(f.lookup("drop", 0).error()) == errc::unknown_topic_or_partition);
  CHECK_FALSE(std::filesystem::exists(f.dir / "drop-0"));
  CHECK_FALSE(std::filesystem::exists(f.dir / "drop-1"));
  CHECK(f.routes->current()->size() == 1);
  REQUIRE(f.lookup("keep", 0));
}

TEST_CASE("a topic re-created under the same name starts with an empty log", "[replica][manager]") {
  manager_fixture f;
  REQUIRE(f.apply(snapshot_of({topic_of("t", 1, {1}, 1)})));
  REQUIRE(f.produce(*f.lookup("t", 0), make_batch(3, "x", 1000)));
  REQUIRE(f.apply(snapshot_of({topic_of("t", 1, {1}, 9)})));
  auto p = f.produce(*f.lookup("t", 0), make_batch(1, "y", 1000));
  REQUIRE(p);
  CHECK(p->base_offset == offset{0});
}

TEST_CASE("topic min.insync.replicas above the ISR refuses acks=-1 produce", "[replica][manager]") {
  manager_fixture f;
  REQUIRE(f.apply(snapshot_of({topic_of("strict", 1, {1}, 1, {{"min.insync.replicas", "2"}})})));
  auto p = f.produce(*f.lookup("strict", 0), make_batch(1, "x", 1000));
  REQUIRE_FALSE(p);
  CHECK(code_of(p.error()) == errc::not_enough_replicas);
}

TEST_CASE("changed topic configs reopen the replica with them and keep its data",
          "[replica][manager]") {
  manager_fixture f;
  REQUIRE(f.apply(snapshot_of({topic_of("live", 1, {1}, 1)})));
  REQUIRE(f.produce(*f.lookup("live", 0), make_batch(2, "x", 1000)));
  REQUIRE(f.apply(snapshot_of({topic_of("live", 1, {1}, 1, {{"min.insync.replicas", "2"}})})));
  auto refused = f.produce(*f.lookup("live", 0), make_batch(1, "y", 1000));
  REQUIRE_FALSE(refused);
  CHECK(code_of(refused.error()) == errc::not_enough_replicas);
  REQUIRE(f.apply(snapshot_of({topic_of("live", 1, {1}, 1)})));
  auto p = f.produce(*f.lookup("live", 0), make_batch(1, "z", 1000));
  REQUIRE(p);
  CHECK(p->base_offset == offset{2});
}

TEST_CASE("a partition with an invalid config is skipped and apply replies false",
          "[replica][manager]") {
  manager_fixture f;
  auto ok = f.apply(snapshot_of({topic_of("bad", 1, {1}, 1, {{"segment.bytes", "nope"}}),
                                 topic_of("good", 1, {1}, 2)}));
  REQUIRE(ok);
  CHECK_FALSE(*ok);
  CHECK(code_of(f.lookup("bad", 0).error()) == errc::unknown_topic_or_partition);
  REQUIRE(f.lookup("good", 0));
}

TEST_CASE("stop writes the recovery points, and a restart serves the same data",
          "[replica][manager]") {
  manager_fixture f;
  auto snap = snapshot_of({topic_of("t", 2, {1}, 1)});
  REQUIRE(f.apply(snap));
  REQUIRE(f.produce(*f.lookup("t", 0), make_batch(3, "a", 1000)));
  REQUIRE(f.produce(*f.lookup("t", 1), make_batch(5, "b", 1000)));
  f.stop();
  auto points = read_offset_checkpoint(f.dir / recovery_point_checkpoint_name);
  REQUIRE(points);
  CHECK(points->at({"t", 0}) == offset{3});
  CHECK(points->at({"t", 1}) == offset{5});

  f.start();
  REQUIRE(f.apply(snap));
  auto r = f.lookup("t", 1);
  REQUIRE(r);
  auto latest = f.sys->request<list_offsets_result>(*r, timeout, offsets_atom_v, latest_timestamp);
  REQUIRE(latest);
  CHECK(latest->found == 5);
  auto p = f.produce(*f.lookup("t", 0), make_batch(1, "c", 1000));
  REQUIRE(p);
  CHECK(p->base_offset == offset{3});
}

TEST_CASE("after stop the routing table is empty", "[replica][manager]") {
  manager_fixture f;
  REQUIRE(f.apply(snapshot_of({topic_of("t", 1, {1}, 1)})));
  CHECK(f.routes->current()->size() == 1);
  auto routes = f.routes;
  f.stop();
  CHECK(routes->current()->empty());
}
