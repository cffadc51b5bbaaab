#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <thread>

#include <caf/all.hpp>

#include "actors/replica/control_codec.hpp"
#include "actors/replica/replica_manager_actor.hpp"
#include "runtime/actor/caf_error.hpp"
#include "runtime/storage/offset_checkpoint.hpp"
#include "tests/support/caf_fixture.hpp"
#include "tests/support/log_builder.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/tree_snapshot.hpp"

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
    t.partitions.push_back(partition_assignment{p, replicas, replicas.front(), 0, replicas, {}});
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
  std::shared_ptr<metadata_cache_registry> metadata = std::make_shared<metadata_cache_registry>();
  replica_manager_actor manager;
  replica_manager_options opts;

  manager_fixture() {
    opts.metadata_registry = metadata;
    opts.node = node_id{1};
    opts.data_dir = dir.path();
    opts.schedule_background_work = false;
    opts.checkpoint_interval_ms = 0;
    start();
  }

  void start() {
    sys = std::make_unique<threaded_system>();
    routes = std::make_shared<routing_registry>();
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
  // Ends every actor without the stop protocol: no flush, no checkpoint (as a kill -9 leaves it).
  void crash() { sys.reset(); }

  offset_map checkpoint(const char* name) {
    auto m = read_offset_checkpoint(dir / name);
    REQUIRE(m);
    return *m;
  }

  // Whether every partition of the snapshot on this node serves.
  caf::expected<bool> apply(metadata_snapshot snap) {
    auto unserved = sys->request<std::vector<topic_partition>>(manager, timeout, apply_atom_v, std::move(snap));
    if (!unserved) return unserved.error();
    return unserved->empty();
  }
  caf::expected<partition_replica_actor> lookup(const std::string& topic, int32_t partition) {
    return sys->request<partition_replica_actor>(manager, timeout, lookup_atom_v, topic, partition);
  }
  // The controller's LeaderAndIsr making this node the leader of `tp`, alone in its ISR; the
  // partitions' errors as the manager answers them.
  std::vector<partition_error_msg> lead_by_controller(const topic_partition& tp, int32_t epoch) {
    leader_and_isr_msg m;
    m.controller_id = 0;
    m.controller_epoch = 1;
    m.partitions.push_back(partition_state_msg{tp, {}, opts.node, leader_epoch{epoch}, {opts.node}, 0, {opts.node}, {}});
    auto reply = sys->request<capnp_frame>(manager, timeout, leaderisr_atom_v, encode(m));
    REQUIRE(reply);
    auto r = decode_control_response(*reply, false);
    REQUIRE(r);
    REQUIRE(r->error == errc::none);
    return r->partitions;
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

TEST_CASE("effective config leaves unclean.leader.election.enable to the controller, so a topic "
          "created with it opens",
          "[replica][manager]") {
  auto c = effective_replica_config({{"unclean.leader.election.enable", "false"}}, log_config{}, 2);
  INFO((c ? std::string() : c.err().to_string()));
  REQUIRE(c);
  CHECK(c->min_insync_replicas == 2);
}

TEST_CASE("apply opens this node's partitions and publishes them, others are unknown",
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

TEST_CASE("a metadata snapshot leaves the controller's replicas alone, across a restart too",
          "[replica][manager]") {
  manager_fixture f;
  const topic_partition placed{"placed", 0};
  CHECK(f.lead_by_controller(placed, 1).empty());
  REQUIRE(f.produce(*f.lookup("placed", 0), make_batch(3, "x", 1000)));
  // The node's own metadata never had the partition: applying it (a topic created through the
  // node, say) must not take it for a deleted topic.
  REQUIRE(f.apply(snapshot_of({topic_of("local", 1, {1}, 1)})));
  auto still = f.lookup("placed", 0);
  REQUIRE(still);
  auto p = f.produce(*still, make_batch(1, "y", 1000));
  REQUIRE(p);
  CHECK(p->base_offset == offset{3});

  // Killed, then started again: the start-up snapshot does not know the partition, so it stays
  // closed on disk until the controller's next LeaderAndIsr opens it with its data.
  f.crash();
  f.start();
  REQUIRE(f.apply(snapshot_of({topic_of("local", 1, {1}, 1)})));
  CHECK(std::filesystem::is_directory(f.dir / "placed-0"));
  CHECK(code_of(f.lookup("placed", 0).error()) == errc::unknown_topic_or_partition);
  CHECK(f.lead_by_controller(placed, 2).empty());
  auto again = f.produce(*f.lookup("placed", 0), make_batch(1, "z", 1000));
  REQUIRE(again);
  CHECK(again->base_offset == offset{4});
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

TEST_CASE("checkpoint writes every replica's recovery point and high watermark", "[replica][manager]") {
  manager_fixture f;
  REQUIRE(f.apply(snapshot_of({topic_of("t", 2, {1}, 1)})));
  // Created partitions are in the checkpoints at once.
  CHECK(f.checkpoint(high_watermark_checkpoint_name).at({"t", 1}) == offset{0});
  REQUIRE(f.produce(*f.lookup("t", 0), make_batch(3, "a", 1000)));
  auto written = f.sys->request<bool>(f.manager, timeout, checkpoint_atom_v);
  REQUIRE(written);
  CHECK(*written);
  CHECK(f.checkpoint(high_watermark_checkpoint_name).at({"t", 0}) == offset{3});
  // Nothing was fsynced yet: the recovery point stays where it was.
  CHECK(f.checkpoint(recovery_point_checkpoint_name).at({"t", 0}) == offset{0});
}

TEST_CASE("checkpoints are written every log.flush.offset.checkpoint.interval.ms", "[replica][manager]") {
  manager_fixture f;
  f.stop();
  f.opts.checkpoint_interval_ms = 20;
  f.start();
  REQUIRE(f.apply(snapshot_of({topic_of("t", 1, {1}, 1)})));
  REQUIRE(f.produce(*f.lookup("t", 0), make_batch(5, "a", 1000)));
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  offset hw{0};
  while (hw != offset{5} && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
    auto m = read_offset_checkpoint(f.dir / high_watermark_checkpoint_name);
    if (m && m->count({"t", 0})) hw = m->at({"t", 0});
  }
  CHECK(hw == offset{5});
}

TEST_CASE("a deleted and re-created topic never inherits the old checkpoint entries",
          "[replica][manager]") {
  manager_fixture f;
  f.stop();
  f.opts.log_defaults.segment_bytes = 100; // every batch rolls a new segment
  f.start();
  REQUIRE(f.apply(snapshot_of({topic_of("t", 1, {1}, 1)})));
  for (int i = 0; i < 10; ++i) REQUIRE(f.produce(*f.lookup("t", 0), make_batch(1, "old", 1000)));
  f.stop();
  CHECK(f.checkpoint(recovery_point_checkpoint_name).at({"t", 0}) == offset{10});

  f.start();
  REQUIRE(f.apply(snapshot_of({topic_of("t", 1, {1}, 1)})));
  REQUIRE(f.apply(snapshot_of({})));
  // The deletion reached the checkpoints before anything else could reuse the name.
  CHECK(f.checkpoint(recovery_point_checkpoint_name).count({"t", 0}) == 0);
  CHECK(f.checkpoint(high_watermark_checkpoint_name).count({"t", 0}) == 0);
  REQUIRE(f.apply(snapshot_of({topic_of("t", 1, {1}, 9)})));
  CHECK(f.checkpoint(recovery_point_checkpoint_name).at({"t", 0}) == offset{0});
  for (int i = 0; i < 4; ++i) REQUIRE(f.produce(*f.lookup("t", 0), make_batch(1, "new", 1000)));
  f.crash();

  // Segment 1 of the new topic was never fsynced; damage it. Under the old entry (10) it would be
  // trusted and served; it must be re-validated and cut.
  const auto seg1 = f.dir / "t-0" / "00000000000000000001.log";
  const auto size = std::filesystem::file_size(seg1);
  {
    std::fstream file(seg1, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(size - 2));
    file.put('\x7f');
  }
  f.start();
  REQUIRE(f.apply(snapshot_of({topic_of("t", 1, {1}, 9)})));
  auto r = f.lookup("t", 0);
  REQUIRE(r);
  auto latest = f.sys->request<list_offsets_result>(*r, timeout, offsets_atom_v, latest_timestamp);
  REQUIRE(latest);
  CHECK(latest->found == 1);
  auto p = f.produce(*r, make_batch(1, "after", 1000));
  REQUIRE(p);
  CHECK(p->base_offset == offset{1});
}

TEST_CASE("a regular file where a partition directory belongs makes it offline with a named error",
          "[replica][manager]") {
  manager_fixture f;
  std::ofstream(f.dir / "t-0") << "in the way";
  auto ok = f.apply(snapshot_of({topic_of("t", 1, {1}, 1), topic_of("u", 1, {1}, 2)}));
  REQUIRE(ok);
  CHECK_FALSE(*ok);
  auto r = f.lookup("t", 0);
  REQUIRE(r);
  auto p = f.produce(*r, make_batch(1, "x", 1000));
  REQUIRE_FALSE(p);
  CHECK(code_of(p.error()) == errc::kafka_storage_error);
  const auto message = from_caf_error(p.error()).message;
  CHECK(message.find("t-0 on node 1 is offline") != std::string::npos);
  CHECK(message.find((f.dir / "t-0").string()) != std::string::npos);
  CHECK(message.find("not a directory") != std::string::npos);
  REQUIRE(f.produce(*f.lookup("u", 0), make_batch(1, "y", 1000)));
}

TEST_CASE("a segment that cannot be stat'ed makes its partition offline, not the manager crash",
          "[replica][manager]") {
  manager_fixture f;
  std::filesystem::create_directories(f.dir / "t-0");
  const auto loop = f.dir / "t-0" / "00000000000000000000.log";
  std::filesystem::create_symlink(loop, loop);
  auto ok = f.apply(snapshot_of({topic_of("t", 1, {1}, 1), topic_of("u", 1, {1}, 2)}));
  REQUIRE(ok);
  CHECK_FALSE(*ok);
  auto p = f.produce(*f.lookup("t", 0), make_batch(1, "x", 1000));
  REQUIRE_FALSE(p);
  CHECK(code_of(p.error()) == errc::kafka_storage_error);
  CHECK(from_caf_error(p.error()).message.find(loop.string()) != std::string::npos);
  REQUIRE(f.produce(*f.lookup("u", 0), make_batch(1, "y", 1000)));
}

TEST_CASE("a vanished partition directory goes offline, is not recreated, keeps "
          "its checkpoint entries", "[replica][manager]") {
  manager_fixture f;
  auto snap = snapshot_of({topic_of("c", 1, {1}, 1)});
  REQUIRE(f.apply(snap));
  REQUIRE(f.produce(*f.lookup("c", 0), make_batch(6, "a", 1000)));
  f.stop();
  std::filesystem::remove_all(f.dir / "c-0");

  f.start();
  auto ok = f.apply(snap);
  REQUIRE(ok);
  CHECK_FALSE(*ok);
  auto p = f.produce(*f.lookup("c", 0), make_batch(1, "b", 1000));
  REQUIRE_FALSE(p);
  CHECK(code_of(p.error()) == errc::kafka_storage_error);
  CHECK(from_caf_error(p.error()).message.find("offsets up to 5 were handed out") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(f.dir / "c-0"));
  f.stop();
  CHECK(f.checkpoint(recovery_point_checkpoint_name).at({"c", 0}) == offset{6});
  CHECK(f.checkpoint(high_watermark_checkpoint_name).at({"c", 0}) == offset{6});
}

TEST_CASE("a lost active segment is offline and its directory left as it is",
          "[replica][manager]") {
  manager_fixture f;
  f.stop();
  f.opts.log_defaults.segment_bytes = 100;
  f.start();
  auto snap = snapshot_of({topic_of("c", 1, {1}, 1)});
  REQUIRE(f.apply(snap));
  for (int i = 0; i < 4; ++i) REQUIRE(f.produce(*f.lookup("c", 0), make_batch(1, "a", 1000)));
  f.stop();
  std::filesystem::remove(f.dir / "c-0" / "00000000000000000003.log");
  const auto before = snapshot_tree(f.dir / "c-0");

  f.start();
  REQUIRE(f.apply(snap));
  auto p = f.produce(*f.lookup("c", 0), make_batch(1, "b", 1000));
  REQUIRE_FALSE(p);
  CHECK(code_of(p.error()) == errc::kafka_storage_error);
  CHECK(from_caf_error(p.error()).message.find("offset 3 missing") != std::string::npos);
  f.stop();
  CHECK(snapshot_tree(f.dir / "c-0") == before);
}

namespace {

update_metadata_msg placed_by_controller(int32_t controller_epoch, int32_t leader, int32_t epoch) {
  update_metadata_msg m;
  m.controller_id = 0;
  m.controller_epoch = controller_epoch;
  m.cluster_id = "controlled";
  for (int32_t n = 1; n <= 3; ++n)
    m.nodes.push_back(node_endpoint_msg{node_id{n}, "127.0.0.1", static_cast<uint16_t>(9000 + n), 0, ""});
  m.topics.push_back(topic_config_msg{"placed", {}, false, {{"min.insync.replicas", "2"}}});
  m.partitions.push_back(partition_state_msg{{"placed", 0}, {}, node_id{leader}, leader_epoch{epoch},
                                             {node_id{1}, node_id{2}, node_id{3}}, 0,
                                             {node_id{1}, node_id{2}, node_id{3}}, {}});
  return m;
}

} // namespace

TEST_CASE("an accepted UpdateMetadata becomes the node's metadata cache, and a stale controller epoch's "
          "changes nothing",
          "[replica][manager][metadata_cache]") {
  manager_fixture f;
  CHECK(f.metadata->current() == nullptr);

  auto ok = f.sys->request<capnp_frame>(f.manager, timeout, metadata_atom_v, encode(placed_by_controller(2, 2, 5)));
  REQUIRE(ok);
  auto cache = f.metadata->current();
  REQUIRE(cache);
  CHECK(cache->controller_epoch() == 2);
  const auto& placed = cache->cluster().topics.at("placed");
  CHECK(placed.partitions.at(0).leader == 2);
  CHECK(placed.partitions.at(0).leader_epoch == 5);
  CHECK(cache->cluster().brokers.at(2).port == 9003);
  auto configs = cache->describe("placed");
  REQUIRE(configs);
  CHECK(configs->at("min.insync.replicas") == "2");
  CHECK(configs->count("retention.ms") == 1);

  auto stale = f.sys->request<capnp_frame>(f.manager, timeout, metadata_atom_v, encode(placed_by_controller(1, 3, 6)));
  REQUIRE_FALSE(stale);
  CHECK(code_of(stale.error()) == errc::stale_controller_epoch);
  CHECK(f.metadata->current() == cache);

  auto same_epoch = f.sys->request<capnp_frame>(f.manager, timeout, metadata_atom_v, encode(placed_by_controller(2, 3, 6)));
  REQUIRE(same_epoch);
  REQUIRE(f.metadata->current() != cache);
  CHECK(f.metadata->current()->cluster().topics.at("placed").partitions.at(0).leader == 3);
}

namespace {

using release_atom = caf::atom_constant<caf::atom("release")>;
using sizes_atom = caf::atom_constant<caf::atom("sizes")>;
using ready_atom = caf::atom_constant<caf::atom("ready")>;
constexpr release_atom release_atom_v{};
constexpr sizes_atom sizes_atom_v{};
constexpr ready_atom ready_atom_v{};

// A controller that becomes `manager`'s (one UpdateMetadata), records how many partitions each
// AlterPartition carries and answers those it holds, accepting each change, only when released.
caf::behavior holding_controller(caf::event_based_actor* self, replica_manager_actor manager,
                                 int32_t epoch) {
  auto sizes = std::make_shared<std::vector<size_t>>();
  auto held =
      std::make_shared<std::vector<std::pair<caf::response_promise, alter_partition_msg>>>();
  auto ready = std::make_shared<bool>(false);
  update_metadata_msg um;
  um.controller_id = 9;
  um.controller_epoch = epoch;
  um.cluster_id = "test";
  self->request(manager, timeout, metadata_atom_v, encode(um)).then([ready](const capnp_frame&) {
    *ready = true;
  });
  return {
      [=](alterisr_atom, const capnp_frame& f) {
        auto msg = decode_alter_partition(f);
        REQUIRE(msg);
        sizes->push_back(msg->partitions.size());
        held->emplace_back(self->make_response_promise(), std::move(*msg));
        return held->back().first;
      },
      [=](release_atom) {
        for (auto& [rp, msg] : *held) {
          alter_partition_response_msg answer;
          for (const auto& item : msg.partitions)
            answer.partitions.push_back({item.tp,
                                         errc::none,
                                         {},
                                         node_id{1},
                                         item.epoch,
                                         item.new_isr,
                                         item.partition_epoch + 1});
          rp.deliver(encode(answer));
        }
        held->clear();
      },
      [=](sizes_atom) { return *sizes; },
      [=](ready_atom) { return *ready; },
  };
}

std::vector<size_t> sizes_at(manager_fixture& f, const caf::actor& controller) {
  auto s = f.sys->request<std::vector<size_t>>(controller, timeout, sizes_atom_v);
  REQUIRE(s);
  return *s;
}

// A holding controller of `epoch`, once the manager took its UpdateMetadata.
caf::actor spawn_holding_controller(manager_fixture& f, int32_t epoch) {
  auto controller = f.sys->sys().spawn(holding_controller, f.manager, epoch);
  f.sys->track(controller);
  bool ready = false;
  for (int i = 0; i < 500 && !ready; ++i) {
    auto r = f.sys->request<bool>(controller, timeout, ready_atom_v);
    REQUIRE(r);
    ready = *r;
    if (!ready) std::this_thread::sleep_for(10ms);
  }
  REQUIRE(ready);
  return controller;
}

// An ISR change of partition t-`p` from a leader, answered to `self`.
void send_isr_change(caf::scoped_actor& self, manager_fixture& f, int32_t p) {
  self->send(f.manager, alterisr_atom_v,
             alter_partition_request{{"t", p}, {}, leader_epoch{0}, 3, {node_id{1}}});
}

} // namespace

TEST_CASE("ISR changes queued behind one in flight reach the controller in one AlterPartition",
          "[replica][manager]") {
  manager_fixture f;
  auto controller = spawn_holding_controller(f, 1);
  caf::scoped_actor self{f.sys->sys()};
  auto sizes = [&] { return sizes_at(f, controller); };
  // The first change waits at the controller and the other four queue behind it.
  send_isr_change(self, f, 0);
  for (int i = 0; i < 500 && sizes().empty(); ++i) std::this_thread::sleep_for(10ms);
  REQUIRE(sizes() == std::vector<size_t>{1});
  for (int32_t p = 1; p <= 4; ++p) send_isr_change(self, f, p);
  caf::anon_send(controller, release_atom_v);
  for (int i = 0; i < 500 && sizes().size() < 2; ++i) std::this_thread::sleep_for(10ms);
  CHECK(sizes() == std::vector<size_t>{1, 4});
  caf::anon_send(controller, release_atom_v);
  size_t answered = 0;
  bool timed_out = false;
  while (!timed_out && answered < 5)
    self->receive(
        [&](const alter_partition_result& r) {
          CHECK(r.partition_epoch == 4);
          ++answered;
        },
        caf::after(timeout) >> [&] { timed_out = true; });
  CHECK(answered == 5);
}

TEST_CASE("an ISR change in flight goes again to a new controller at once", "[replica][manager]") {
  manager_fixture f;
  auto old_controller = spawn_holding_controller(f, 1);
  caf::scoped_actor self{f.sys->sys()};
  send_isr_change(self, f, 0);
  for (int i = 0; i < 500 && sizes_at(f, old_controller).empty(); ++i)
    std::this_thread::sleep_for(10ms);
  REQUIRE(sizes_at(f, old_controller) == std::vector<size_t>{1});
  // The old controller never answers (its node died); the next one gets the change.
  auto new_controller = spawn_holding_controller(f, 2);
  for (int i = 0; i < 500 && sizes_at(f, new_controller).empty(); ++i)
    std::this_thread::sleep_for(10ms);
  REQUIRE(sizes_at(f, new_controller) == std::vector<size_t>{1});
  caf::anon_send(new_controller, release_atom_v);
  bool answered = false;
  self->receive([&](const alter_partition_result& r) { answered = r.partition_epoch == 4; },
                caf::after(timeout) >> [] {});
  CHECK(answered);
}

TEST_CASE("control messages for another incarnation of the node (its previous process) are "
          "refused with STALE_BROKER_EPOCH and change nothing",
          "[replica][manager]") {
  manager_fixture f;
  f.stop();
  f.opts.incarnation.fill(2);
  f.start();
  // The controller decided for the node's previous process (incarnation 1): this one, which may
  // have come back with a log a crash shortened, must not lead with it.
  leader_and_isr_msg old;
  old.controller_id = 0;
  old.controller_epoch = 1;
  old.partitions.push_back(partition_state_msg{{"t", 0}, {}, f.opts.node, leader_epoch{3},
                                               {f.opts.node}, 0, {f.opts.node}, {}});
  old.target.fill(1);
  auto reply = f.sys->request<capnp_frame>(f.manager, timeout, leaderisr_atom_v, encode(old));
  REQUIRE(reply);
  auto r = decode_control_response(*reply, false);
  REQUIRE(r);
  CHECK(r->error == errc::stale_broker_epoch);
  CHECK_FALSE(f.lookup("t", 0));
  update_metadata_msg um;
  um.controller_epoch = 1;
  um.target.fill(1);
  auto refused = f.sys->request<capnp_frame>(f.manager, timeout, metadata_atom_v, encode(um));
  REQUIRE_FALSE(refused);
  CHECK(code_of(refused.error()) == errc::stale_broker_epoch);

  // Addressed to this process: taken.
  auto current = old;
  current.target.fill(2);
  reply = f.sys->request<capnp_frame>(f.manager, timeout, leaderisr_atom_v, encode(current));
  REQUIRE(reply);
  CHECK(decode_control_response(*reply, false)->error == errc::none);
  CHECK(f.lookup("t", 0));
}

namespace {

// The full UpdateMetadata of a cluster of nodes 1-3 holding topic "moved" (id `id`) whose
// partition 0 has `replicas` at partition epoch `partition_epoch`.
update_metadata_msg full_with(const topic_id& id, std::vector<node_id> replicas,
                              int32_t partition_epoch) {
  update_metadata_msg m;
  m.controller_id = 0;
  m.controller_epoch = 1;
  m.cluster_id = "controlled";
  m.topics.push_back(topic_config_msg{"moved", id, false, {}});
  m.partitions.push_back(partition_state_msg{{"moved", 0}, id, replicas.front(), leader_epoch{1},
                                             replicas, partition_epoch, replicas, {}});
  return m;
}

} // namespace

TEST_CASE("a replica that a full UpdateMetadata no longer places on the node is deleted, unless "
          "the state is older than the replica's",
          "[replica][manager]") {
  manager_fixture f;
  topic_id id{};
  id.fill(7);
  leader_and_isr_msg m;
  m.controller_id = 0;
  m.controller_epoch = 1;
  m.partitions.push_back(partition_state_msg{{"moved", 0}, id, f.opts.node, leader_epoch{1},
                                             {f.opts.node}, 4, {f.opts.node}, {}});
  auto reply = f.sys->request<capnp_frame>(f.manager, timeout, leaderisr_atom_v, encode(m));
  REQUIRE(reply);
  REQUIRE(decode_control_response(*reply, false)->error == errc::none);
  REQUIRE(f.lookup("moved", 0));
  const auto dir = f.dir / "moved-0";
  REQUIRE(std::filesystem::exists(dir));

  // Still placed here, or a state from before the replica's partition epoch: kept.
  REQUIRE(f.sys->request<capnp_frame>(f.manager, timeout, metadata_atom_v,
                                      encode(full_with(id, {f.opts.node, node_id{2}}, 5))));
  REQUIRE(f.sys->request<capnp_frame>(f.manager, timeout, metadata_atom_v,
                                      encode(full_with(id, {node_id{2}, node_id{3}}, 3))));
  CHECK(f.lookup("moved", 0));
  CHECK(std::filesystem::exists(dir));

  SECTION("open") {
    // A reassignment moved it to nodes 2 and 3 while its StopReplica was lost.
    REQUIRE(f.sys->request<capnp_frame>(f.manager, timeout, metadata_atom_v,
                                        encode(full_with(id, {node_id{2}, node_id{3}}, 6))));
  }
  SECTION("on disk only, after a restart") {
    // The node was down when the reassignment moved it: the new process never opened it.
    f.stop();
    f.start();
    REQUIRE(std::filesystem::exists(dir));
    REQUIRE(f.sys->request<capnp_frame>(f.manager, timeout, metadata_atom_v,
                                        encode(full_with(id, {node_id{2}, node_id{3}}, 6))));
  }
  bool gone = false;
  for (int i = 0; i < 500 && !gone; ++i) {
    gone = !f.lookup("moved", 0) && !std::filesystem::exists(dir);
    if (!gone) std::this_thread::sleep_for(10ms);
  }
  CHECK(gone);
}

TEST_CASE("a directory on disk of an older topic of the same name is not deleted as a stray",
          "[replica][manager]") {
  manager_fixture f;
  topic_id old_id{}, new_id{};
  old_id.fill(7);
  new_id.fill(8);
  leader_and_isr_msg m;
  m.controller_id = 0;
  m.controller_epoch = 1;
  m.partitions.push_back(partition_state_msg{{"moved", 0}, old_id, f.opts.node, leader_epoch{1},
                                             {f.opts.node}, 4, {f.opts.node}, {}});
  auto reply = f.sys->request<capnp_frame>(f.manager, timeout, leaderisr_atom_v, encode(m));
  REQUIRE(reply);
  f.stop();
  f.start();
  REQUIRE(f.sys->request<capnp_frame>(f.manager, timeout, metadata_atom_v,
                                      encode(full_with(new_id, {node_id{2}, node_id{3}}, 6))));
  // Answered after the manager's await: a deletion would have happened by now.
  REQUIRE(f.sys->request<capnp_frame>(f.manager, timeout, metadata_atom_v,
                                      encode(full_with(new_id, {node_id{2}, node_id{3}}, 6))));
  CHECK(std::filesystem::exists(f.dir / "moved-0"));
}

TEST_CASE("a LeaderAndIsr or StopReplica of many partitions publishes the routes once, not once "
          "per partition",
          "[replica][manager]") {
  // Each publication copies every route: one per partition made a whole-cluster restart with
  // 10,000 leaderless partitions per node take minutes.
  manager_fixture f;
  f.stop();
  auto leaderless = std::make_shared<leaderless_replica_registry>();
  f.opts.leaderless_registry = leaderless;
  f.start();
  topic_id id{};
  id.fill(9);
  constexpr int partitions = 40;
  leader_and_isr_msg m;
  m.controller_id = 0;
  m.controller_epoch = 1;
  // No leader yet (the last replica in their ISR is not back): each reports its log instead.
  for (int p = 0; p < partitions; ++p)
    m.partitions.push_back(partition_state_msg{{"many", p}, id, node_id{-1}, leader_epoch{3},
                                               {node_id{2}}, 5, {f.opts.node, node_id{2}}, {}});
  const auto before = f.routes->publications();
  auto reply = f.sys->request<capnp_frame>(f.manager, timeout, leaderisr_atom_v, encode(m));
  REQUIRE(reply);
  REQUIRE(decode_control_response(*reply, false)->error == errc::none);
  CHECK(f.routes->current()->size() == partitions);
  CHECK(leaderless->current()->size() == partitions);
  CHECK(f.routes->publications() - before <= 2);

  stop_replica_msg stop;
  stop.controller_id = 0;
  stop.controller_epoch = 1;
  stop.delete_partitions = true;
  stop.sequence = 0;
  for (int p = 0; p < partitions; ++p) stop.partitions.push_back(stop_partition_msg{{"many", p}, id});
  const auto before_stop = f.routes->publications();
  reply = f.sys->request<capnp_frame>(f.manager, timeout, stopreplica_atom_v, encode(stop));
  REQUIRE(reply);
  REQUIRE(decode_control_response(*reply, true)->error == errc::none);
  CHECK(f.routes->current()->empty());
  CHECK(f.routes->publications() - before_stop == 1);
}
