// Blocking file work runs on the node's I/O workers, not on the scheduler's threads
// (actors/log/io_worker_actor.hpp): a partition whose fsync hangs holds up only itself. The
// actor system here has one scheduler thread, so a single blocking call on it would stop every
// actor; with the work on the workers, the other partition's produce and fetch still complete.

#include <catch2/catch.hpp>

#include <future>

#include <caf/all.hpp>

#include "actors/replica/control_codec.hpp"
#include "actors/replica/node_endpoint_actor.hpp"
#include "actors/replica/replica_manager_actor.hpp"
#include "runtime/storage/fault_injection_env.hpp"
#include "tests/support/caf_fixture.hpp"
#include "tests/support/log_builder.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

constexpr caf::timespan timeout = 10s;

topic_metadata topic_of(const std::string& name, uint8_t id, std::map<std::string, std::string> configs) {
  topic_metadata t;
  t.name = name;
  t.id[0] = id;
  t.configs = std::move(configs);
  t.partitions.push_back(partition_assignment{0, {1}, 1, 0, {1}, {}});
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

actor_config_options one_scheduler_thread() {
  actor_config_options o;
  o.load_middleman = false;
  o.max_threads = 1;
  return o;
}

produce_request produce_of(bytes batch) {
  return produce_request{batch_buffer::of(std::move(batch)), -1, 30000};
}

// One node's replica manager with the fault injector installed, on a single scheduler thread.
struct isolated_manager {
  temp_dir dir{"io-isolation"};
  fault_injection_env faults;
  scoped_storage_env installed{faults};
  threaded_system sys{one_scheduler_thread()};
  replica_manager_actor manager;

  explicit isolated_manager(int32_t io_workers = 2) {
    replica_manager_options opts;
    opts.node = node_id{1};
    opts.data_dir = dir.path();
    opts.schedule_background_work = false;
    opts.checkpoint_interval_ms = 0;
    opts.io_workers = io_workers;
    auto spawned = spawn_replica_manager(sys.sys(), opts, std::make_shared<routing_registry>());
    REQUIRE(spawned);
    manager = *spawned;
    sys.track(manager);
  }
};

} // namespace

TEST_CASE("a partition stalled in fsync holds up neither the scheduler nor another partition",
          "[replica][io]") {
  isolated_manager node;
  auto& faults = node.faults;
  auto& sys = node.sys;
  auto& manager = node.manager;
  // a-0 fsyncs every append (flush.messages=1); a and b are opened in that order and so get
  // different workers.
  auto applied = sys.request<std::vector<topic_partition>>(
    manager, timeout, apply_atom_v,
    snapshot_of({topic_of("a", 1, {{"flush.messages", "1"}}), topic_of("b", 2, {})}));
  REQUIRE(applied);
  REQUIRE(applied->empty());
  auto a = sys.request<partition_replica_actor>(manager, timeout, lookup_atom_v, std::string("a"), 0);
  auto b = sys.request<partition_replica_actor>(manager, timeout, lookup_atom_v, std::string("b"), 0);
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(sys.request<produce_result>(*a, timeout, produce_atom_v, produce_of(make_batch(1, "a", 1000))));

  faults.stall("/a-0/", storage_op::sync);
  auto stalled = std::async(std::launch::async, [&] {
    return sys.request<produce_result>(*a, 60s, produce_atom_v, produce_of(make_batch(1, "a-slow", 1000)));
  });
  // Should a check below fail, the stall ends before the produce above is waited for.
  struct release_on_exit {
    fault_injection_env& faults;
    ~release_on_exit() { faults.release(); }
  } release_guard{faults};
  REQUIRE(faults.wait_stalled(1, 10s));

  // While a-0's fsync hangs: b-0 takes a produce and serves it back.
  auto produced = sys.request<produce_result>(*b, timeout, produce_atom_v,
                                              produce_of(make_batch(2, "b", 1000)));
  INFO((produced ? std::string() : caf::to_string(produced.error())));
  REQUIRE(produced);
  CHECK(produced->base_offset == offset{0});
  auto fetched = sys.request<fetch_result>(*b, timeout, fetch_atom_v, fetch_request{offset{0}, 1 << 20, 1, 0});
  INFO((fetched ? std::string() : caf::to_string(fetched.error())));
  REQUIRE(fetched);
  CHECK(fetched->high_watermark == offset{2});
  CHECK(records_of(fetched->records.bytes()).size() == 2);
  CHECK(faults.stalled() == 1);
  CHECK(stalled.wait_for(0s) == std::future_status::timeout);

  // Released, a-0's produce completes.
  faults.release();
  REQUIRE(stalled.wait_for(30s) == std::future_status::ready);
  auto slow = stalled.get();
  INFO((slow ? std::string() : caf::to_string(slow.error())));
  REQUIRE(slow);
  CHECK(slow->base_offset == offset{1});
  REQUIRE(sys.request<bool>(manager, timeout, stop_atom_v));
}

TEST_CASE("partitions load on the I/O workers in parallel, as many at once as there are workers",
          "[replica][io]") {
  isolated_manager node;
  auto& faults = node.faults;
  auto& sys = node.sys;
  auto& manager = node.manager;
  // Each partition's first file operation (its partition.metadata) stalls.
  for (const char* p : {"/a-0/", "/b-0/", "/c-0/"}) faults.stall(p, storage_op::open);
  auto applied = std::async(std::launch::async, [&] {
    return sys.request<std::vector<topic_partition>>(
      manager, 60s, apply_atom_v,
      snapshot_of({topic_of("a", 1, {}), topic_of("b", 2, {}), topic_of("c", 3, {})}));
  });
  struct release_on_exit {
    fault_injection_env& faults;
    ~release_on_exit() { faults.release(); }
  } release_guard{faults};

  // Two loads are in progress at once; the third waits for a worker, since both are held.
  REQUIRE(faults.wait_stalled(2, 10s));
  CHECK(faults.stalled() == 2);
  // The one scheduler thread is free meanwhile: another actor still answers.
  auto echo = sys.sys().spawn([]() -> caf::behavior { return {[](int32_t x) { return x + 1; }}; });
  sys.track(echo);
  auto answered = sys.request<int32_t>(echo, timeout, int32_t{41});
  REQUIRE(answered);
  CHECK(*answered == 42);
  CHECK(applied.wait_for(0s) == std::future_status::timeout);

  faults.release();
  REQUIRE(applied.wait_for(30s) == std::future_status::ready);
  auto unserved = applied.get();
  REQUIRE(unserved);
  CHECK(unserved->empty());
  for (const char* t : {"a", "b", "c"}) {
    auto r = sys.request<partition_replica_actor>(manager, timeout, lookup_atom_v, std::string(t), 0);
    REQUIRE(r);
    CHECK(sys.request<produce_result>(*r, timeout, produce_atom_v, produce_of(make_batch(1, t, 1000))));
  }
  REQUIRE(sys.request<bool>(manager, timeout, stop_atom_v));
}

TEST_CASE("the replica manager writes its checkpoints on an I/O worker", "[replica][io]") {
  isolated_manager node;
  auto& faults = node.faults;
  auto& sys = node.sys;
  auto& manager = node.manager;
  REQUIRE(sys.request<std::vector<topic_partition>>(manager, timeout, apply_atom_v,
                                                     snapshot_of({topic_of("a", 1, {})})));

  faults.stall("recovery-point-offset-checkpoint", storage_op::sync);
  auto written = std::async(std::launch::async, [&] {
    return sys.request<bool>(manager, 60s, checkpoint_atom_v);
  });
  struct release_on_exit {
    fault_injection_env& faults;
    ~release_on_exit() { faults.release(); }
  } release_guard{faults};
  REQUIRE(faults.wait_stalled(1, 10s));
  auto echo = sys.sys().spawn([]() -> caf::behavior { return {[](int32_t x) { return x + 1; }}; });
  sys.track(echo);
  auto answered = sys.request<int32_t>(echo, timeout, int32_t{41});
  REQUIRE(answered);
  CHECK(*answered == 42);

  faults.release();
  REQUIRE(written.wait_for(30s) == std::future_status::ready);
  auto ok = written.get();
  REQUIRE(ok);
  CHECK(*ok);
  REQUIRE(sys.request<bool>(manager, timeout, stop_atom_v));
}

TEST_CASE("LeaderAndIsr loads a partition new to the node on an I/O worker", "[replica][io]") {
  isolated_manager node;
  auto& faults = node.faults;
  auto& sys = node.sys;
  auto& manager = node.manager;
  leader_and_isr_msg req;
  req.controller_id = 1;
  req.controller_epoch = 1;
  partition_state_msg state;
  state.tp = {"a", 0};
  state.id[0] = 1;
  state.leader = node_id{1};
  state.epoch = leader_epoch{1};
  state.isr = {node_id{1}};
  state.replicas = {node_id{1}};
  req.partitions.push_back(state);

  faults.stall("/a-0/", storage_op::open);
  auto answered_req = std::async(std::launch::async, [&] {
    return sys.request<capnp_frame>(caf::actor_cast<control_sink>(manager), 60s, leaderisr_atom_v,
                                    encode(req));
  });
  struct release_on_exit {
    fault_injection_env& faults;
    ~release_on_exit() { faults.release(); }
  } release_guard{faults};
  REQUIRE(faults.wait_stalled(1, 10s));
  auto echo = sys.sys().spawn([]() -> caf::behavior { return {[](int32_t x) { return x + 1; }}; });
  sys.track(echo);
  auto answered = sys.request<int32_t>(echo, timeout, int32_t{41});
  REQUIRE(answered);
  CHECK(*answered == 42);

  faults.release();
  REQUIRE(answered_req.wait_for(30s) == std::future_status::ready);
  auto frame = answered_req.get();
  REQUIRE(frame);
  auto response = decode_control_response(*frame, false);
  REQUIRE(response);
  CHECK(response->error == errc::none);
  CHECK(response->partitions.empty());
  auto a = sys.request<partition_replica_actor>(manager, timeout, lookup_atom_v, std::string("a"), 0);
  REQUIRE(a);
  CHECK(sys.request<produce_result>(*a, timeout, produce_atom_v, produce_of(make_batch(1, "a", 1000))));
  REQUIRE(sys.request<bool>(manager, timeout, stop_atom_v));
}
