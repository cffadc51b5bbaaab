#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <set>

#include <caf/all.hpp>

#include "actors/controller/metadata_actor_spawn.hpp"
#include "actors/replica/replica_atoms.hpp"
#include "runtime/actor/caf_error.hpp"
#include "runtime/cluster/metadata_store.hpp"
#include "runtime/cluster/producer_id_pool.hpp"
#include "runtime/storage/fault_injection_env.hpp"
#include "tests/support/caf_fixture.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace capstan::test;

namespace {

errc code_of(const caf::error& e) { return from_caf_error(e).code; }

// What the stub replica manager serves: every partition of every applied topic but those listed
// in `broken`, which it reports as not serving, as the real one does when a partition fails to
// open.
struct stub_routes {
  std::set<topic_partition> broken;
};

// Stands in for the replica manager: records every applied snapshot and answers which
// partitions do not serve.
replica_manager_actor::behavior_type
stub_replica_manager(replica_manager_actor::pointer,
                     std::shared_ptr<std::vector<metadata_snapshot>> applied,
                     std::shared_ptr<stub_routes> routes) {
  return {
    [applied, routes](apply_atom, metadata_snapshot s) {
      std::vector<topic_partition> unserved;
      for (const auto& [name, t] : s->topics)
        for (const auto& a : t.partitions)
          if (routes->broken.count(topic_partition{name, a.partition}) != 0)
            unserved.emplace_back(name, a.partition);
      applied->push_back(std::move(s));
      return unserved;
    },
    [](lookup_atom, const std::string&, int32_t) -> caf::result<partition_replica_actor> {
      return make_error(errc::unknown_topic_or_partition);
    },
    [](checkpoint_atom) { return true; },
    [](stop_atom) { return true; },
    [](tick_atom) {},
    [](leaderisr_atom, const capnp_frame&) -> caf::result<capnp_frame> { return capnp_frame{}; },
    [](metadata_atom, const capnp_frame&) -> caf::result<capnp_frame> { return capnp_frame{}; },
    [](stopreplica_atom, const capnp_frame&) -> caf::result<capnp_frame> { return capnp_frame{}; },
    [](alterisr_atom, const alter_partition_request&) -> caf::result<alter_partition_result> {
      return to_caf_error(make_error(errc::request_timed_out, "no controller in this test"));
    },
  };
}

// A real actor system: the actor writes its store on an I/O worker (a detached actor, its own
// thread), which the testing scheduler does not drive.
struct metadata_fixture : threaded_system {
  temp_dir dir;
  std::shared_ptr<std::vector<metadata_snapshot>> applied =
    std::make_shared<std::vector<metadata_snapshot>>();
  std::shared_ptr<stub_routes> routes = std::make_shared<stub_routes>();
  replica_manager_actor replicas;
  size_t brokers = 1;
  int32_t max_broker_partitions = 100;

  metadata_fixture() { replicas = spawn(stub_replica_manager, applied, routes); }

  metadata_actor_options options() {
    metadata_actor_options o;
    o.store_file = dir / metadata_store_file;
    o.cluster_id = "cluster-a";
    o.node_id = 1;
    o.log_defaults.retention_ms = 1000;
    o.min_insync_replicas = 1;
    o.default_partitions = 4;
    o.max_broker_partitions = max_broker_partitions;
    o.live_brokers = [this] {
      std::vector<broker_info> out;
      for (size_t i = 0; i < brokers; ++i)
        out.push_back(broker_info{static_cast<int32_t>(i + 1), "127.0.0.1", static_cast<uint16_t>(9000 + i)});
      return out;
    };
    return o;
  }

  template <class... Rs, class Handle, class... Ts>
  auto request(const Handle& dest, Ts&&... xs) {
    return threaded_system::request<Rs...>(dest, std::chrono::seconds(30), std::forward<Ts>(xs)...);
  }

  metadata_actor start() {
    auto meta = spawn_metadata_actor(sys(), options(), replicas);
    REQUIRE(meta);
    track(*meta);
    return *meta;
  }

  caf::expected<topic_metadata> create(const metadata_actor& meta, topic_spec spec) {
    return request<topic_metadata>(meta, create_atom_v, std::move(spec));
  }
};

} // namespace

TEST_CASE_METHOD(metadata_fixture, "create assigns, persists and applies before it answers",
                 "[controller][metadata]") {
  auto meta = start();
  auto created = create(meta, topic_spec{"orders", 3, 1, {{"cleanup.policy", "compact"}}});
  REQUIRE(created);
  CHECK(created->name == "orders");
  CHECK(created->id != topic_id{});
  CHECK_FALSE(created->internal);
  REQUIRE(created->partitions.size() == 3);
  for (int32_t p = 0; p < 3; ++p) {
    const auto& a = created->partitions[static_cast<size_t>(p)];
    CHECK(a.partition == p);
    CHECK(a.replicas == std::vector<int32_t>{1});
    CHECK(a.leader == 1);
    CHECK(a.leader_epoch == 0);
    CHECK(a.isr == a.replicas);
  }
  REQUIRE(applied->size() == 1);
  CHECK(applied->back()->topics.count("orders") == 1);
  CHECK(applied->back()->controller_id == 1);
  CHECK(applied->back()->cluster_id == "cluster-a");

  auto stored = read_metadata_store(dir / metadata_store_file);
  REQUIRE(stored);
  REQUIRE(stored->topics.count("orders") == 1);
  CHECK(stored->topics.at("orders").id == created->id);
  CHECK(stored->topics.at("orders").configs.at("cleanup.policy") == "compact");

  auto snap = request<metadata_snapshot>(meta, snapshot_atom_v);
  REQUIRE(snap);
  REQUIRE((*snap)->brokers.size() == 1);
  CHECK((*snap)->brokers[0].port == 9000);
  CHECK((*snap)->topics.at("orders").partitions.size() == 3);
}

TEST_CASE_METHOD(metadata_fixture, "a create asking for -1 partitions or replicas gets the broker defaults",
                 "[controller][metadata]") {
  auto meta = start();
  auto created = create(meta, topic_spec{"defaults", -1, -1, {}});
  REQUIRE(created);
  CHECK(created->partitions.size() == 4);
  CHECK(created->partitions[0].replicas.size() == 1);
}

TEST_CASE_METHOD(metadata_fixture, "replicas are spread round-robin over the live brokers",
                 "[controller][metadata]") {
  brokers = 3;
  auto meta = start();
  auto created = create(meta, topic_spec{"spread", 4, 2, {}});
  REQUIRE(created);
  CHECK(created->partitions[0].replicas == std::vector<int32_t>{1, 2});
  CHECK(created->partitions[1].replicas == std::vector<int32_t>{2, 3});
  CHECK(created->partitions[2].replicas == std::vector<int32_t>{3, 1});
  CHECK(created->partitions[3].replicas == std::vector<int32_t>{1, 2});
  CHECK(created->partitions[2].leader == 3);
}

TEST_CASE_METHOD(metadata_fixture, "invalid and duplicate creates get Kafka's errors and change nothing",
                 "[controller][metadata]") {
  auto meta = start();
  REQUIRE(create(meta, topic_spec{"orders", 1, 1, {}}));
  auto dup = create(meta, topic_spec{"orders", 2, 1, {}});
  REQUIRE_FALSE(dup);
  CHECK(code_of(dup.error()) == errc::topic_already_exists);
  auto bad_name = create(meta, topic_spec{"no/slash", 1, 1, {}});
  REQUIRE_FALSE(bad_name);
  CHECK(code_of(bad_name.error()) == errc::invalid_topic_exception);
  auto bad_rf = create(meta, topic_spec{"rf", 1, 2, {}});
  REQUIRE_FALSE(bad_rf);
  CHECK(code_of(bad_rf.error()) == errc::invalid_replication_factor);
  auto bad_config = create(meta, topic_spec{"cfg", 1, 1, {{"retention.ms", "soon"}}});
  REQUIRE_FALSE(bad_config);
  CHECK(code_of(bad_config.error()) == errc::invalid_config);
  CHECK(applied->size() == 1);
  auto snap = request<metadata_snapshot>(meta, snapshot_atom_v);
  REQUIRE(snap);
  CHECK((*snap)->topics.size() == 1);
  CHECK((*snap)->topics.at("orders").partitions.size() == 1);
}

TEST_CASE_METHOD(metadata_fixture, "a name that collides with an existing one once '.' and '_' are alike is refused",
                 "[controller][metadata]") {
  auto meta = start();
  REQUIRE(create(meta, topic_spec{"a_b", 1, 1, {}}));
  auto collides = create(meta, topic_spec{"a.b", 1, 1, {}});
  REQUIRE_FALSE(collides);
  CHECK(code_of(collides.error()) == errc::invalid_topic_exception);
  CHECK(from_caf_error(collides.error()).message == "Topic 'a.b' collides with existing topic: a_b");
  auto snap = request<metadata_snapshot>(meta, snapshot_atom_v);
  REQUIRE(snap);
  CHECK((*snap)->topics.count("a.b") == 0);
}

TEST_CASE_METHOD(metadata_fixture, "describe overlays topic overrides on the broker defaults",
                 "[controller][metadata]") {
  auto meta = start();
  REQUIRE(create(meta, topic_spec{"orders", 1, 1, {{"segment.bytes", "1048576"}}}));
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

TEST_CASE_METHOD(metadata_fixture, "a restarted metadata actor loads its topics, and another cluster's store is refused",
                 "[controller][metadata]") {
  topic_id id{};
  {
    auto meta = start();
    auto created = create(meta, topic_spec{"orders", 2, 1, {}});
    REQUIRE(created);
    id = created->id;
    caf::anon_send_exit(meta, caf::exit_reason::user_shutdown);
  }
  auto meta = start();
  auto snap = request<metadata_snapshot>(meta, snapshot_atom_v);
  REQUIRE(snap);
  REQUIRE((*snap)->topics.count("orders") == 1);
  CHECK((*snap)->topics.at("orders").id == id);
  CHECK((*snap)->topics.at("orders").partitions.size() == 2);

  auto other = options();
  other.cluster_id = "cluster-b";
  auto refused = spawn_metadata_actor(sys(), other, replicas);
  REQUIRE_FALSE(refused);
  CHECK(refused.code() == errc::kafka_storage_error);
  CHECK(refused.err().message.find("cluster-a") != std::string::npos);
}

TEST_CASE_METHOD(metadata_fixture, "a create whose partitions do not all open fails naming them and "
                                   "leaves no topic behind",
                 "[controller][metadata]") {
  auto meta = start();
  routes->broken = {{"orders", 1}, {"orders", 3}};
  auto created = create(meta, topic_spec{"orders", 4, 1, {}});
  REQUIRE_FALSE(created);
  auto e = from_caf_error(created.error());
  CHECK(e.code == errc::kafka_storage_error);
  CHECK(e.message.find("partition(s) 1, 3 of topic 'orders'") != std::string::npos);
  CHECK(e.message.find("not created") != std::string::npos);

  // Rolled back: neither the store nor the replica manager's last snapshot has the topic.
  REQUIRE(applied->size() == 2);
  CHECK(applied->front()->topics.count("orders") == 1);
  CHECK(applied->back()->topics.count("orders") == 0);
  auto stored = read_metadata_store(dir / metadata_store_file);
  REQUIRE(stored);
  CHECK(stored->topics.count("orders") == 0);
  auto snap = request<metadata_snapshot>(meta, snapshot_atom_v);
  REQUIRE(snap);
  CHECK((*snap)->topics.count("orders") == 0);

  routes->broken.clear();
  REQUIRE(create(meta, topic_spec{"orders", 4, 1, {}}));
}

TEST_CASE_METHOD(metadata_fixture, "another topic's partition that still does not open does not fail "
                                   "a create",
                 "[controller][metadata]") {
  auto meta = start();
  REQUIRE(create(meta, topic_spec{"old", 1, 1, {}}));
  routes->broken = {{"old", 0}};
  auto created = create(meta, topic_spec{"orders", 2, 1, {}});
  REQUIRE(created);
  CHECK(created->partitions.size() == 2);
}

TEST_CASE_METHOD(metadata_fixture, "a create past max.broker.partitions is POLICY_VIOLATION and changes nothing",
                 "[controller][metadata]") {
  max_broker_partitions = 10;
  auto meta = start();
  REQUIRE(create(meta, topic_spec{"a", 6, 1, {}}));
  auto over = create(meta, topic_spec{"b", 5, 1, {}});
  REQUIRE_FALSE(over);
  CHECK(code_of(over.error()) == errc::policy_violation);
  CHECK_THAT(from_caf_error(over.error()).message, Catch::Contains("max.broker.partitions"));
  CHECK(applied->size() == 1);
  auto stored = read_metadata_store(dir / metadata_store_file);
  REQUIRE(stored);
  CHECK(stored->topics.count("b") == 0);
  REQUIRE(create(meta, topic_spec{"b", 4, 1, {}}));
}

TEST_CASE_METHOD(metadata_fixture, "create refuses configs below Kafka's minimums and broker settings, naming the key",
                 "[controller][metadata]") {
  auto meta = start();
  const std::vector<std::pair<std::string, std::string>> refused = {
    {"segment.bytes", "14"},
    {"segment.ms", "1"},
    {"log.cleaner.backoff.ms", "0"},
    {"log.retention.check.interval.ms", "1"},
    {"message.timestamp.after.max.ms", "-1"},
  };
  for (const auto& [key, value] : refused) {
    INFO(key << "=" << value);
    auto created = create(meta, topic_spec{"t", 1, 1, {{key, value}}});
    REQUIRE_FALSE(created);
    CHECK(code_of(created.error()) == errc::invalid_config);
    CHECK_THAT(from_caf_error(created.error()).message, Catch::Contains(key));
  }
  REQUIRE(create(meta, topic_spec{"t", 1, 1, {}}));
  auto configs = request<config_map>(meta, describe_atom_v, std::string("t"));
  REQUIRE(configs);
  CHECK(configs->count("log.cleaner.backoff.ms") == 0);
  CHECK(configs->at("message.timestamp.after.max.ms") == "3600000");
}

TEST_CASE("a metadata store write stalled in fsync holds up no scheduler thread",
          "[controller][metadata][io]") {
  temp_dir dir;
  fault_injection_env faults;
  scoped_storage_env installed(faults);
  actor_config_options one_thread;
  one_thread.load_middleman = false;
  one_thread.max_threads = 1;
  threaded_system sys(one_thread);
  auto replicas = sys.sys().spawn(stub_replica_manager,
                                  std::make_shared<std::vector<metadata_snapshot>>(),
                                  std::make_shared<stub_routes>());
  sys.track(replicas);
  metadata_actor_options opts;
  opts.store_file = dir / metadata_store_file;
  opts.cluster_id = "cluster-a";
  auto meta = spawn_metadata_actor(sys.sys(), opts, replicas);
  REQUIRE(meta);
  sys.track(*meta);

  faults.stall(metadata_store_file, storage_op::sync);
  struct release_on_exit {
    fault_injection_env& faults;
    ~release_on_exit() { faults.release(); }
  } release_guard{faults};
  auto created = std::async(std::launch::async, [&] {
    return sys.request<topic_metadata>(*meta, std::chrono::seconds(60), create_atom_v,
                                       topic_spec{"orders", 1, 1, {}});
  });
  REQUIRE(faults.wait_stalled(1, std::chrono::seconds(10)));
  // The only scheduler thread is free: another actor still answers.
  auto echo = sys.sys().spawn([]() -> caf::behavior { return {[](int32_t x) { return x + 1; }}; });
  sys.track(echo);
  auto answered = sys.request<int32_t>(echo, std::chrono::seconds(10), int32_t{41});
  REQUIRE(answered);
  CHECK(*answered == 42);

  faults.release();
  REQUIRE(created.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
  auto topic = created.get();
  REQUIRE(topic);
  CHECK(topic->name == "orders");
  auto stored = read_metadata_store(dir / metadata_store_file);
  REQUIRE(stored);
  CHECK(stored->topics.count("orders") == 1);
}
