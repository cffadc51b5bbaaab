#include <catch2/catch.hpp>

#include <atomic>
#include <future>
#include <memory>
#include <thread>
#include <vector>

#include <caf/all.hpp>

#include "actors/replica/fetch_codec.hpp"
#include "actors/replica/fetch_session_actor.hpp"
#include "actors/replica/partition_replica_actor.hpp"
#include "runtime/actor/caf_error.hpp"
#include "runtime/storage/fault_injection_env.hpp"
#include "tests/support/caf_fixture.hpp"
#include "tests/support/log_builder.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

constexpr caf::timespan timeout = 30s;

errc code_of(const caf::error& e) { return from_caf_error(e).code; }

fetch_request fetch_at(int64_t from, int32_t min_bytes = 1, int32_t max_wait_ms = 0) {
  fetch_request r;
  r.from = offset{from};
  r.min_bytes = min_bytes;
  r.max_wait_ms = max_wait_ms;
  return r;
}

produce_request produce_of(bytes batch, int16_t acks = -1) {
  return produce_request{batch_buffer::of(std::move(batch)), acks, 30000};
}

// Node `leader` leads `replicas`, all of them in the ISR, at `epoch`.
replica_role role_of(int32_t leader, int32_t epoch, std::vector<node_id> replicas) {
  replica_role role;
  role.leader = node_id{leader};
  role.epoch = leader_epoch{epoch};
  role.replicas = std::move(replicas);
  role.isr = role.replicas;
  return role;
}

// A replica of orders-0 in `dir`, with no background timers.
partition_replica_options orders_options(const temp_dir& dir) {
  partition_replica_options opts;
  opts.topic = "orders";
  opts.partition = 0;
  opts.dir = dir / "orders-0";
  opts.schedule_background_work = false;
  return opts;
}

// One replica on a real actor system over a temporary directory.
struct replica_fixture {
  temp_dir dir{"replica"};
  threaded_system sys;
  partition_replica_actor replica;

  // Leads alone in its ISR, or with `followers` (that never fetch) in it too.
  explicit replica_fixture(int32_t min_insync_replicas = 1, std::vector<node_id> followers = {}) {
    auto opts = orders_options(dir);
    opts.min_insync_replicas = min_insync_replicas;
    auto r = spawn_partition_replica(sys.sys(), opts);
    if (!r) FAIL("spawn failed: " << r.err().to_string());
    replica = *r;
    sys.track(replica);
    followers.insert(followers.begin(), opts.node);
    auto became = sys.request<bool>(replica, timeout, become_atom_v,
                                    role_of(opts.node.value(), 3, std::move(followers)));
    if (!became) FAIL("become failed: " << caf::to_string(became.error()));
  }

  caf::expected<produce_result> produce(bytes batch, int16_t acks = -1) {
    return sys.request<produce_result>(replica, timeout, produce_atom_v, produce_of(std::move(batch), acks));
  }
  caf::expected<fetch_result> fetch(const fetch_request& req) {
    return sys.request<fetch_result>(replica, timeout, fetch_atom_v, req);
  }
  caf::expected<list_offsets_result> offsets(timestamp_ms ts) {
    return sys.request<list_offsets_result>(replica, timeout, offsets_atom_v, ts);
  }
};

} // namespace

TEST_CASE("produce with acks 1 and -1 returns consecutive base offsets and fetch reads them back",
          "[replica]") {
  replica_fixture f;
  auto a = f.produce(make_batch(3, "a", 1000), 1);
  REQUIRE(a);
  CHECK(a->base_offset == offset{0});
  auto b = f.produce(make_batch(2, "b", 1000), -1);
  REQUIRE(b);
  CHECK(b->base_offset == offset{3});
  CHECK(b->log_start == offset{0});

  auto r = f.fetch(fetch_at(0));
  REQUIRE(r);
  CHECK(r->high_watermark == offset{5});
  auto records = records_of(r->records.bytes());
  REQUIRE(records.size() == 5);
  CHECK(records[0].value == "a-0");
  CHECK(records[4].value == "b-1");
  CHECK(records[4].off == offset{4});
}

TEST_CASE("acks=0 answers at once without an offset, and the records still arrive", "[replica]") {
  replica_fixture f;
  auto a = f.produce(make_batch(2, "z", 1000), 0);
  REQUIRE(a);
  CHECK(a->base_offset == offset{-1});
  // Long-polls until the append behind the acks=0 reply raised the high watermark.
  auto r = f.fetch(fetch_at(0, 1, 10000));
  REQUIRE(r);
  CHECK(records_of(r->records.bytes()).size() == 2);
}

TEST_CASE("acks other than 0, 1 and -1 are INVALID_CONFIG and append nothing", "[replica]") {
  replica_fixture f;
  for (int16_t acks : {int16_t{2}, int16_t{-2}}) {
    auto p = f.produce(make_batch(1, "x", 1000), acks);
    REQUIRE_FALSE(p);
    CHECK(code_of(p.error()) == errc::invalid_required_acks);
  }
  auto latest = f.offsets(latest_timestamp);
  REQUIRE(latest);
  CHECK(latest->found == 0);
}

TEST_CASE("acks=-1 below min.insync.replicas is NOT_ENOUGH_REPLICAS before appending, acks=1 works",
          "[replica]") {
  replica_fixture f(2);
  auto p = f.produce(make_batch(1, "x", 1000), -1);
  REQUIRE_FALSE(p);
  CHECK(code_of(p.error()) == errc::not_enough_replicas);
  CHECK(f.offsets(latest_timestamp)->found == 0);
  auto q = f.produce(make_batch(1, "x", 1000), 1);
  REQUIRE(q);
  CHECK(q->base_offset == offset{0});
}

TEST_CASE("min.insync.replicas changed on a live leader judges the next acks=-1 produce",
          "[replica]") {
  // Alone in its ISR: min.insync.replicas 1 takes acks=-1.
  replica_fixture f;
  REQUIRE(f.produce(make_batch(1, "a", 1000), -1));
  replica_config raised;
  raised.min_insync_replicas = 2;
  caf::anon_send(f.replica, reconfig_atom_v, raised);
  auto refused = f.produce(make_batch(1, "b", 1000), -1);
  REQUIRE_FALSE(refused);
  CHECK(code_of(refused.error()) == errc::not_enough_replicas);

  replica_config lowered;
  lowered.min_insync_replicas = 1;
  caf::anon_send(f.replica, reconfig_atom_v, lowered);
  auto taken = f.produce(make_batch(1, "c", 1000), -1);
  REQUIRE(taken);
  CHECK(taken->base_offset == offset{1});
}

TEST_CASE("a corrupt batch is refused with the log's error", "[replica]") {
  replica_fixture f;
  auto batch = make_batch(2, "x", 1000);
  batch[batch.size() - 1] ^= 0xff;
  auto p = f.produce(batch, 1);
  REQUIRE_FALSE(p);
  CHECK(code_of(p.error()) == errc::corrupt_message);
}

TEST_CASE("fetch outside [log start, log end] is OFFSET_OUT_OF_RANGE", "[replica]") {
  replica_fixture f;
  REQUIRE(f.produce(make_batch(3, "a", 1000)));
  for (int64_t from : {int64_t{-1}, int64_t{4}, int64_t{100}}) {
    auto r = f.fetch(fetch_at(from));
    REQUIRE_FALSE(r);
    CHECK(code_of(r.error()) == errc::offset_out_of_range);
  }
  auto at_hw = f.fetch(fetch_at(3));
  REQUIRE(at_hw);
  CHECK(at_hw->records.empty());
  CHECK(at_hw->high_watermark == offset{3});
}

// A new leader's HW can trail the one its predecessor served a consumer up to.
TEST_CASE(
    "a consumer fetch between the high watermark and the log end gets no records and no error",
    "[replica]") {
  replica_fixture f(1, {node_id{99}});
  REQUIRE(f.produce(make_batch(3, "a", 1000), 1));
  for (int64_t from : {int64_t{0}, int64_t{2}, int64_t{3}}) {
    INFO("from " << from);
    auto r = f.fetch(fetch_at(from));
    REQUIRE(r);
    CHECK(r->records.empty());
    CHECK(r->high_watermark == offset{0});
  }
  auto beyond = f.fetch(fetch_at(4));
  REQUIRE_FALSE(beyond);
  CHECK(code_of(beyond.error()) == errc::offset_out_of_range);
}

TEST_CASE("fetched records all lie below the returned high watermark", "[replica]") {
  replica_fixture f;
  for (int i = 0; i < 5; ++i) REQUIRE(f.produce(make_batch(4, "b" + std::to_string(i), 1000), 1));
  for (int64_t from = 0; from <= 20; from += 3) {
    auto r = f.fetch(fetch_at(from));
    REQUIRE(r);
    for (const auto& rec : records_of(r->records.bytes())) CHECK(rec.off < r->high_watermark);
  }
}

TEST_CASE("a parked fetch is woken by a later produce", "[replica]") {
  replica_fixture f;
  caf::scoped_actor self{f.sys.sys()};
  // Sent from one actor, so the replica parks the fetch before it sees the produce.
  auto fetch = self->request(f.replica, timeout, fetch_atom_v, fetch_at(0, 1, 20000));
  auto produce = self->request(f.replica, timeout, produce_atom_v, produce_of(make_batch(2, "w", 1000)));
  std::optional<fetch_result> got;
  fetch.receive([&](fetch_result& r) { got = std::move(r); },
                [&](caf::error& e) { FAIL("fetch failed: " << caf::to_string(e)); });
  produce.receive([](const produce_result&) {},
                  [&](caf::error& e) { FAIL("produce failed: " << caf::to_string(e)); });
  REQUIRE(got);
  CHECK(got->high_watermark == offset{2});
  CHECK(records_of(got->records.bytes()).size() == 2);
}

TEST_CASE("a parked fetch waits until min_bytes have arrived below the high watermark",
          "[replica]") {
  replica_fixture f;
  const auto one = make_batch(3, "m", 1000);
  caf::scoped_actor self{f.sys.sys()};
  auto fetch = self->request(f.replica, timeout, fetch_atom_v,
                             fetch_at(0, static_cast<int32_t>(one.size() + 1), 20000));
  auto p1 = self->request(f.replica, timeout, produce_atom_v, produce_of(one));
  auto p2 = self->request(f.replica, timeout, produce_atom_v, produce_of(make_batch(3, "n", 1000)));
  std::optional<fetch_result> got;
  fetch.receive([&](fetch_result& r) { got = std::move(r); },
                [&](caf::error& e) { FAIL("fetch failed: " << caf::to_string(e)); });
  p1.receive([](const produce_result&) {}, [&](caf::error& e) { FAIL(caf::to_string(e)); });
  p2.receive([](const produce_result&) {}, [&](caf::error& e) { FAIL(caf::to_string(e)); });
  REQUIRE(got);
  CHECK(records_of(got->records.bytes()).size() == 6);
}

TEST_CASE("a parked fetch with nothing new answers empty after max_wait_ms", "[replica]") {
  replica_fixture f;
  REQUIRE(f.produce(make_batch(1, "a", 1000)));
  auto r = f.fetch(fetch_at(1, 1, 50));
  REQUIRE(r);
  CHECK(r->records.empty());
  CHECK(r->high_watermark == offset{1});
}

TEST_CASE("parked fetches are each answered at their own deadline, whatever parked before them",
          "[replica]") {
  replica_fixture f;
  REQUIRE(f.produce(make_batch(1, "a", 1000)));
  caf::scoped_actor self{f.sys.sys()};
  // One tick serves all three: armed for the 60 s fetch, moved earlier for the 50 ms one, and
  // armed again for the 150 ms one once the 50 ms one is answered.
  constexpr caf::timespan short_wait = 10s;
  auto slow = self->request(f.replica, timeout, fetch_atom_v, fetch_at(1, 1, 60000));
  auto first = self->request(f.replica, short_wait, fetch_atom_v, fetch_at(1, 1, 50));
  auto second = self->request(f.replica, short_wait, fetch_atom_v, fetch_at(1, 1, 150));
  for (auto* parked : {&first, &second}) {
    std::optional<fetch_result> got;
    parked->receive([&](fetch_result& r) { got = std::move(r); },
                    [&](caf::error& e) { FAIL("fetch failed: " << caf::to_string(e)); });
    REQUIRE(got);
    CHECK(got->records.empty());
  }
  // The slow one is still parked: a produce wakes it.
  REQUIRE(f.produce(make_batch(1, "b", 1000)));
  std::optional<fetch_result> got;
  slow.receive([&](fetch_result& r) { got = std::move(r); },
               [&](caf::error& e) { FAIL("fetch failed: " << caf::to_string(e)); });
  REQUIRE(got);
  CHECK(records_of(got->records.bytes()).size() == 1);
}

TEST_CASE("list offsets: earliest, latest and by timestamp", "[replica]") {
  replica_fixture f;
  REQUIRE(f.produce(make_batch(2, "a", 1000)));
  REQUIRE(f.produce(make_batch(2, "b", 2000)));
  REQUIRE(f.produce(make_batch(2, "c", 3000)));
  CHECK(f.offsets(earliest_timestamp)->found == 0);
  CHECK(f.offsets(latest_timestamp)->found == 6);
  auto mid = f.offsets(1500);
  REQUIRE(mid);
  CHECK(mid->found == 2);
  CHECK(mid->timestamp == 2000);
  auto exact = f.offsets(3000);
  REQUIRE(exact);
  CHECK(exact->found == 4);
  CHECK(f.offsets(5000)->found == -1);
}

TEST_CASE("close answers parked fetches and replies the recovery point and high watermark", "[replica]") {
  replica_fixture f;
  REQUIRE(f.produce(make_batch(3, "a", 1000)));
  caf::scoped_actor self{f.sys.sys()};
  auto fetch = self->request(f.replica, timeout, fetch_atom_v, fetch_at(3, 1, 20000));
  auto close = self->request(f.replica, timeout, close_atom_v);
  std::optional<fetch_result> got;
  fetch.receive([&](fetch_result& r) { got = std::move(r); },
                [&](caf::error& e) { FAIL("fetch failed: " << caf::to_string(e)); });
  std::optional<replica_checkpoint> point;
  close.receive([&](const replica_checkpoint& p) { point = p; },
                [&](caf::error& e) { FAIL(caf::to_string(e)); });
  REQUIRE(got);
  CHECK(got->records.empty());
  REQUIRE(point);
  CHECK(point->recovery_point == offset{3});
  CHECK(point->high_watermark == offset{3});
}

TEST_CASE("checkpoint reports the recovery point and the high watermark", "[replica]") {
  replica_fixture f;
  REQUIRE(f.produce(make_batch(3, "a", 1000)));
  auto before = f.sys.request<replica_checkpoint>(f.replica, timeout, checkpoint_atom_v);
  REQUIRE(before);
  CHECK(before->high_watermark == offset{3});
  CHECK(before->recovery_point == offset{0});
}

TEST_CASE("info reports the log's offsets", "[replica]") {
  replica_fixture f;
  REQUIRE(f.produce(make_batch(4, "a", 1000)));
  auto info = f.sys.request<log_info>(f.replica, timeout, info_atom_v);
  REQUIRE(info);
  CHECK(info->log_start == offset{0});
  CHECK(info->log_end == offset{4});
}

TEST_CASE("an AlterPartition answer for another leader epoch leaves the leader free to propose again",
          "[replica][isr]") {
  temp_dir dir{"replica"};
  threaded_system sys;
  auto proposals = std::make_shared<std::atomic<int>>(0);
  // A controller that has moved on: it answers every proposal with a later leader epoch.
  auto sink = sys.spawn([proposals]() -> alter_partition_sink::behavior_type {
    return {[proposals](alterisr_atom, const alter_partition_request& req) {
      ++*proposals;
      return alter_partition_result{node_id{1}, leader_epoch{req.epoch.value() + 1},
                                    req.partition_epoch + 1, {node_id{1}, node_id{2}}};
    }};
  });
  sys.track(sink);
  auto opts = orders_options(dir);
  opts.replica_lag_time_max_ms = 100;
  opts.alter_sink = sink;
  auto r = spawn_partition_replica(sys.sys(), opts);
  REQUIRE(r);
  sys.track(*r);
  REQUIRE(sys.request<bool>(*r, timeout, become_atom_v, role_of(1, 3, {node_id{1}, node_id{2}})));
  // Follower 2 never fetches: every ISR check proposes to shrink, as long as no proposal is
  // still waiting for its answer.
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (*proposals < 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(20ms);
  CHECK(*proposals >= 2);
}

TEST_CASE("a leader elected again at a newer epoch keeps its high watermark", "[replica][isr]") {
  // Node 1 leads with node 2 in its ISR; node 2 has fetched everything, so the HW is at 3.
  replica_fixture f(1, {node_id{2}});
  REQUIRE(f.produce(make_batch(3, "a", 1000), 1));
  follower_fetch_request req;
  req.replica = node_id{2};
  req.current_leader_epoch = leader_epoch{3};
  req.fetch_offset = offset{3};
  REQUIRE(f.sys.request<follower_fetch_result>(f.replica, timeout, ffetch_atom_v, req));
  REQUIRE(f.fetch(fetch_at(0))->high_watermark == offset{3});

  // The controller elects it again (node 2's session ran out and it came back, say). Node 2 has
  // not fetched under the new epoch, which pins the HW where it is: at 3, never back at 0.
  REQUIRE(f.sys.request<bool>(f.replica, timeout, become_atom_v,
                              role_of(1, 4, {node_id{1}, node_id{2}})));
  auto r = f.fetch(fetch_at(0));
  REQUIRE(r);
  CHECK(r->high_watermark == offset{3});
  CHECK(records_of(r->records.bytes()).size() == 3);
}

TEST_CASE("a fetch parked at a new leader is woken when the HW passes the records it inherited",
          "[replica][isr]") {
  temp_dir dir{"replica"};
  threaded_system sys;
  auto opts = orders_options(dir);
  opts.max_fetch_wait_ms = 600000;
  auto spawned = spawn_partition_replica(sys.sys(), opts);
  REQUIRE(spawned);
  auto r = *spawned;
  sys.track(r);
  // Node 1 led with node 2 in its ISR, which never fetched: offsets 0..2 are above the HW.
  REQUIRE(sys.request<bool>(r, timeout, become_atom_v, role_of(1, 3, {node_id{1}, node_id{2}})));
  REQUIRE(sys.request<produce_result>(r, timeout, produce_atom_v, produce_of(make_batch(3, "a", 1000), 1)));
  // Elected again (as after any election, the tail above the HW was written under another
  // leadership): a consumer at offset 0 parks for far longer than this test waits.
  REQUIRE(sys.request<bool>(r, timeout, become_atom_v, role_of(1, 4, {node_id{1}, node_id{2}})));
  caf::scoped_actor self{sys.sys()};
  auto fetch = self->request(r, timeout, fetch_atom_v, fetch_at(0, 1, 600000));
  // Node 2 catches up: the HW passes 0..2, and the consumer gets them now, not at its deadline.
  follower_fetch_request req;
  req.replica = node_id{2};
  req.current_leader_epoch = leader_epoch{4};
  req.fetch_offset = offset{3};
  auto caught_up = self->request(r, timeout, ffetch_atom_v, req);
  caught_up.receive([](const follower_fetch_result&) {},
                    [&](caf::error& e) { FAIL("follower fetch failed: " << caf::to_string(e)); });
  std::optional<fetch_result> got;
  fetch.receive([&](fetch_result& res) { got = std::move(res); },
                [&](caf::error& e) { FAIL("fetch failed: " << caf::to_string(e)); });
  REQUIRE(got);
  CHECK(got->high_watermark == offset{3});
  CHECK(records_of(got->records.bytes()).size() == 3);
}

TEST_CASE("a follower whose latest epoch holds no record the leader lacks drops that epoch when "
          "it truncates, so it asks with an older one next",
          "[replica][isr]") {
  // Node 1 led epoch 3 and wrote offsets 0..4, then led epoch 5 without writing anything.
  replica_fixture f;
  REQUIRE(f.produce(make_batch(5, "a", 1000), 1));
  REQUIRE(f.sys.request<bool>(f.replica, timeout, become_atom_v, role_of(1, 5, {node_id{1}})));
  auto led = f.sys.request<follower_position>(f.replica, timeout, position_atom_v);
  REQUIRE(led);
  REQUIRE(led->latest_epoch == leader_epoch{5});

  // Now it follows node 2 at epoch 6, whose log has no epoch 5 (it knows 4, ending at 7).
  REQUIRE(f.sys.request<bool>(f.replica, timeout, become_atom_v,
                              role_of(2, 6, {node_id{1}, node_id{2}})));
  auto d = f.sys.request<truncation_decision>(f.replica, timeout, ftruncate_atom_v,
                                              leader_epoch{6}, epoch_end{leader_epoch{4}, offset{7}});
  REQUIRE(d);
  CHECK(d->truncate_to == offset{5});
  CHECK_FALSE(d->complete);
  // No record is lost, and the next round's question is about epoch 3, which the leader can
  // answer: without the drop it would ask about epoch 5 again, for ever.
  auto after = f.sys.request<follower_position>(f.replica, timeout, position_atom_v);
  REQUIRE(after);
  CHECK(after->log_end == offset{5});
  CHECK(after->latest_epoch == leader_epoch{3});
}

TEST_CASE("an append made as leader and answered after the follower's truncation cut it leaves "
          "the follower's log end at its log's",
          "[replica][isr]") {
  // A leader paused with a produce waiting, then resumed (safety seed 7): it appends the produce,
  // learns it follows another node, and truncates that append away before its answer comes.
  fault_injection_env faults;
  scoped_storage_env installed{faults};
  replica_fixture f;
  REQUIRE(f.produce(make_batch(2, "a", 1000), 1));
  // Offset 2's write hangs in the log's worker, so its answer comes after what follows.
  faults.stall(".log", storage_op::write);
  struct release_on_exit {
    fault_injection_env& faults;
    ~release_on_exit() { faults.release(); }
  } release_guard{faults};
  auto late = std::async(std::launch::async, [&] { return f.produce(make_batch(1, "b", 1000), 1); });
  REQUIRE(faults.wait_stalled(1, 10s));

  // Node 2 leads epoch 4, and its log ends epoch 3 at offset 2: offset 2 was this replica's alone.
  REQUIRE(f.sys.request<bool>(f.replica, timeout, become_atom_v,
                              role_of(2, 4, {node_id{1}, node_id{2}})));
  // The fetcher asks where the log ends, then has it truncated.
  auto pos = f.sys.request<follower_position>(f.replica, timeout, position_atom_v);
  REQUIRE(pos);
  REQUIRE(pos->log_end == offset{3});
  auto cut = std::async(std::launch::async, [&] {
    return f.sys.request<truncation_decision>(f.replica, timeout, ftruncate_atom_v, leader_epoch{4},
                                              epoch_end{leader_epoch{3}, offset{2}});
  });
  // The truncation waits behind the hung write: the replica holds its other messages meanwhile
  // (a consumer fetch, which a follower refuses at once otherwise, gets no answer).
  // Bounded by time, not tries: refusals come back at once, and under load the truncation's
  // thread may send it only after many of them.
  bool held = false;
  for (const auto until = std::chrono::steady_clock::now() + 10s; !held && std::chrono::steady_clock::now() < until;) {
    auto r = f.sys.request<fetch_result>(f.replica, caf::timespan{100ms}, fetch_atom_v, fetch_at(0));
    held = !r && r.error() == caf::sec::request_timeout;
    if (!held) std::this_thread::sleep_for(10ms);
  }
  REQUIRE(held);

  faults.release();
  auto d = cut.get();
  REQUIRE(d);
  CHECK(d->truncate_to == offset{2});
  REQUIRE(late.get());
  // An empty answer to the fetcher: the log end it hands back is where the fetcher asks next.
  auto end = f.sys.request<offset>(f.replica, timeout, replicate_atom_v,
                                   replicate_request{leader_epoch{4}, {}, offset{2}, offset{0}});
  REQUIRE(end);
  CHECK(*end == offset{2});
  auto after = f.sys.request<follower_position>(f.replica, timeout, position_atom_v);
  REQUIRE(after);
  CHECK(after->log_end == offset{2});
}

TEST_CASE("a follower's truncation below its log end has the checkpoints written at once",
          "[replica][isr]") {
  temp_dir dir{"replica"};
  threaded_system sys;
  auto opts = orders_options(dir);
  auto told = std::make_shared<std::atomic<int>>(0);
  opts.truncated = [told] { ++*told; };
  auto r = spawn_partition_replica(sys.sys(), opts);
  REQUIRE(r);
  sys.track(*r);
  REQUIRE(sys.request<bool>(*r, timeout, become_atom_v, role_of(1, 3, {node_id{1}})));
  // Two batches, offsets 0..1 and 2..4: a truncation cuts at a batch's start.
  REQUIRE(sys.request<produce_result>(*r, timeout, produce_atom_v, produce_of(make_batch(2, "a", 1000), 1)));
  REQUIRE(sys.request<produce_result>(*r, timeout, produce_atom_v, produce_of(make_batch(3, "b", 1000), 1)));
  REQUIRE(sys.request<bool>(*r, timeout, become_atom_v, role_of(2, 4, {node_id{1}, node_id{2}})));
  // The new leader ends epoch 3 at offset 2: offsets 2..4 were this replica's alone.
  auto d = sys.request<truncation_decision>(*r, timeout, ftruncate_atom_v, leader_epoch{4},
                                            epoch_end{leader_epoch{3}, offset{2}});
  REQUIRE(d);
  CHECK(d->truncate_to == offset{2});
  CHECK(*told == 1);
  // Nothing to cut: nothing to tell.
  d = sys.request<truncation_decision>(*r, timeout, ftruncate_atom_v, leader_epoch{4},
                                       epoch_end{leader_epoch{3}, offset{2}});
  REQUIRE(d);
  CHECK(*told == 1);
}

TEST_CASE("a fetch naming a leadership this replica has not applied yet is UNKNOWN_LEADER_EPOCH",
          "[replica][isr]") {
  temp_dir dir{"replica"};
  threaded_system sys;
  auto r = spawn_partition_replica(sys.sys(), orders_options(dir));
  REQUIRE(r);
  sys.track(*r);
  // Node 1 follows node 3 at epoch 4; the controller has made it leader at epoch 5, and node 2
  // learned that first.
  REQUIRE(sys.request<bool>(*r, timeout, become_atom_v,
                            role_of(3, 4, {node_id{1}, node_id{2}, node_id{3}})));
  auto fetch_at_epoch = [&](int32_t epoch) {
    follower_fetch_request req;
    req.replica = node_id{2};
    req.current_leader_epoch = leader_epoch{epoch};
    return sys.request<follower_fetch_result>(*r, timeout, ffetch_atom_v, req);
  };
  auto ahead = fetch_at_epoch(5);
  REQUIRE(ahead);
  CHECK(ahead->error == errc::unknown_leader_epoch);
  auto same = fetch_at_epoch(4);
  REQUIRE(same);
  CHECK(same->error == errc::not_leader_or_follower);
  auto older = fetch_at_epoch(3);
  REQUIRE(older);
  CHECK(older->error == errc::fenced_leader_epoch);
}

namespace {

// Node 1 follows node 3 at epoch 4 while its metadata (announced) names it leader at epoch 5.
partition_replica_actor announced_follower(threaded_system& sys, const temp_dir& dir,
                                           std::chrono::milliseconds wait = 100ms) {
  auto opts = orders_options(dir);
  opts.announced_leadership = [] { return std::optional<leader_epoch>{leader_epoch{5}}; };
  opts.leadership_wait = wait;
  auto r = spawn_partition_replica(sys.sys(), opts);
  REQUIRE(r);
  sys.track(*r);
  REQUIRE(sys.request<bool>(*r, timeout, become_atom_v, role_of(3, 4, {node_id{1}, node_id{3}})));
  return *r;
}

replica_role leader_at_5() {
  return role_of(1, 5, {node_id{1}, node_id{3}});
}

} // namespace

TEST_CASE("a produce that comes before the leadership its node's metadata announced waits for it "
          "and is appended, in arrival order",
          "[replica][isr]") {
  temp_dir dir{"replica"};
  threaded_system sys;
  auto replica = announced_follower(sys, dir, 30s);
  caf::scoped_actor self{sys.sys()};
  // Sent from one actor: the replica sees both produces before its LeaderAndIsr.
  auto first =
      self->request(replica, timeout, produce_atom_v, produce_of(make_batch(2, "a", 1000), 1));
  auto second =
      self->request(replica, timeout, produce_atom_v, produce_of(make_batch(3, "b", 1000), 1));
  auto became = self->request(replica, timeout, become_atom_v, leader_at_5());
  std::vector<int64_t> bases;
  for (auto* p : {&first, &second})
    p->receive([&](const produce_result& r) { bases.push_back(r.base_offset.value()); },
               [&](caf::error& e) { FAIL("produce failed: " << caf::to_string(e)); });
  became.receive([](bool) {}, [&](caf::error& e) { FAIL("become failed: " << caf::to_string(e)); });
  CHECK(bases == std::vector<int64_t>{0, 2});
}

TEST_CASE("a produce waiting for an announced leadership is NOT_LEADER_OR_FOLLOWER when it does "
          "not come in time, or another leader's does",
          "[replica][isr]") {
  temp_dir dir{"replica"};
  threaded_system sys;
  SECTION("no LeaderAndIsr within leadership_wait") {
    auto replica = announced_follower(sys, dir, 50ms);
    auto refused = sys.request<produce_result>(replica, timeout, produce_atom_v,
                                               produce_of(make_batch(1, "a", 1000), 1));
    REQUIRE_FALSE(refused);
    CHECK(code_of(refused.error()) == errc::not_leader_or_follower);
  }
  SECTION("a LeaderAndIsr that keeps it a follower answers at once") {
    auto replica = announced_follower(sys, dir, 10min);
    caf::scoped_actor self{sys.sys()};
    auto produce =
        self->request(replica, timeout, produce_atom_v, produce_of(make_batch(1, "b", 1000), 1));
    auto became =
        self->request(replica, timeout, become_atom_v, role_of(3, 5, {node_id{1}, node_id{3}}));
    std::optional<errc> code;
    produce.receive([&](const produce_result&) { code = errc::none; },
                    [&](caf::error& e) { code = code_of(e); });
    became.receive([](bool) {},
                   [&](caf::error& e) { FAIL("become failed: " << caf::to_string(e)); });
    CHECK(code == errc::not_leader_or_follower);
  }
}

TEST_CASE("a consumer fetch naming another leader epoch is refused as stale or unknown, one naming "
          "none is served",
          "[replica][isr]") {
  replica_fixture f; // leads at epoch 3
  REQUIRE(f.produce(make_batch(2, "a", 1000), 1));
  auto at_epoch = [&](int32_t epoch) {
    auto req = fetch_at(0);
    req.current_leader_epoch = leader_epoch{epoch};
    return f.fetch(req);
  };
  auto older = at_epoch(2);
  REQUIRE_FALSE(older);
  CHECK(code_of(older.error()) == errc::fenced_leader_epoch);
  auto newer = at_epoch(4);
  REQUIRE_FALSE(newer);
  CHECK(code_of(newer.error()) == errc::unknown_leader_epoch);
  auto same = at_epoch(3);
  REQUIRE(same);
  CHECK(records_of(same->records.bytes()).size() == 2);
  auto unchecked = at_epoch(-1);
  REQUIRE(unchecked);
  CHECK(records_of(unchecked->records.bytes()).size() == 2);
}

TEST_CASE("a consumer fetch after records the log no longer holds is told where the log diverged "
          "instead of being served",
          "[replica][isr]") {
  replica_fixture f; // leads at epoch 3
  REQUIRE(f.produce(make_batch(3, "a", 1000), 1)); // offsets 0-2 at epoch 3
  REQUIRE(f.sys.request<bool>(f.replica, timeout, become_atom_v, role_of(1, 5, {node_id{1}})));
  REQUIRE(f.produce(make_batch(2, "b", 1000), 1)); // offsets 3-4 at epoch 5
  auto after = [&](int32_t last_epoch, int64_t from) {
    auto req = fetch_at(from);
    req.last_fetched_epoch = leader_epoch{last_epoch};
    return f.fetch(req);
  };
  auto whole = after(3, 3); // epoch 3 ends at 3 here too
  REQUIRE(whole);
  CHECK_FALSE(whole->diverging);
  CHECK(records_of(whole->records.bytes()).size() == 2);
  // The consumer read epoch 3 up to offset 4, where this log has epoch 5.
  auto cut = after(3, 5);
  REQUIRE(cut);
  REQUIRE(cut->diverging);
  CHECK(*cut->diverging == epoch_end{leader_epoch{3}, offset{3}});
  CHECK(cut->records.empty());
  // The consumer read records of epoch 4, which this log never had.
  auto unknown_here = after(4, 4);
  REQUIRE(unknown_here);
  REQUIRE(unknown_here->diverging);
  CHECK(*unknown_here->diverging == epoch_end{leader_epoch{3}, offset{3}});
  auto current = after(5, 4);
  REQUIRE(current);
  CHECK_FALSE(current->diverging);
  // Records of a later epoch than this leader's: unknown here, or, for a caller whose metadata
  // names this leadership, of an earlier topic of the same name (its position resets).
  auto newer = after(6, 5);
  REQUIRE_FALSE(newer);
  CHECK(code_of(newer.error()) == errc::unknown_leader_epoch);
  auto req = fetch_at(5);
  req.last_fetched_epoch = leader_epoch{6};
  req.current_leader_epoch = leader_epoch{5};
  auto recreated = f.fetch(req);
  REQUIRE_FALSE(recreated);
  CHECK(code_of(recreated.error()) == errc::offset_out_of_range);
}

TEST_CASE("leader.replication.throttled.rate limits what a follower outside the ISR reads, never "
          "an in-sync one",
          "[replica][throttle]") {
  temp_dir dir{"replica"};
  threaded_system sys;
  auto opts = orders_options(dir);
  opts.leader_replication_throttled_rate = 1; // a byte per second: one batch, then nothing
  auto spawned = spawn_partition_replica(sys.sys(), opts);
  REQUIRE(spawned);
  auto replica = *spawned;
  sys.track(replica);
  // Node 2 is a new replica, not in the ISR yet; node 3 is in it.
  auto role = role_of(1, 3, {node_id{1}, node_id{2}, node_id{3}});
  role.isr = {node_id{1}, node_id{3}};
  REQUIRE(sys.request<bool>(replica, timeout, become_atom_v, role));
  for (int i = 0; i < 3; ++i)
    REQUIRE(sys.request<produce_result>(replica, timeout, produce_atom_v,
                                        produce_of(make_batch(2, "b" + std::to_string(i), 1000), 1)));
  auto fetch_by = [&](int32_t node, int64_t from) {
    follower_fetch_request req;
    req.replica = node_id{node};
    req.current_leader_epoch = leader_epoch{3};
    req.fetch_offset = offset{from};
    auto r = sys.request<follower_fetch_result>(replica, timeout, ffetch_atom_v, req);
    REQUIRE(r);
    REQUIRE(r->error == errc::none);
    return records_of(r->records.bytes()).size();
  };
  CHECK(fetch_by(3, 0) == 6);
  // Node 3 at the log end moves the HW there: node 2 is behind it, and stays outside the ISR.
  CHECK(fetch_by(3, 6) == 0);
  CHECK(fetch_by(2, 0) == 2); // the first batch, whole
  CHECK(fetch_by(2, 2) == 0); // the bucket is in debt
  CHECK(fetch_by(3, 0) == 6);
  replica_config unlimited;
  unlimited.log = opts.config;
  unlimited.min_insync_replicas = opts.min_insync_replicas;
  caf::anon_send(replica, reconfig_atom_v, unlimited);
  CHECK(fetch_by(2, 2) == 4);
}

TEST_CASE("a follower's Fetch names its process, and the leader's ISR proposal names it to the "
          "controller (KIP-903)",
          "[replica][isr]") {
  temp_dir dir{"replica"};
  threaded_system sys;
  auto named = std::make_shared<std::vector<incarnation_bytes>>();
  auto seen = std::make_shared<std::atomic<bool>>(false);
  auto sink = sys.spawn([named, seen]() -> alter_partition_sink::behavior_type {
    return {[named, seen](alterisr_atom, const alter_partition_request& req) {
      if (!*seen) {
        *named = req.incarnations;
        *seen = true;
      }
      return alter_partition_result{node_id{1}, req.epoch, req.partition_epoch + 1, req.isr};
    }};
  });
  auto opts = orders_options(dir);
  opts.alter_sink = sink;
  auto r = spawn_partition_replica(sys.sys(), opts);
  REQUIRE(r);
  sys.track(*r);
  // Node 1 leads, node 2 is a replica outside the ISR.
  auto role = role_of(1, 3, {node_id{1}, node_id{2}});
  role.isr = {node_id{1}};
  REQUIRE(sys.request<bool>(*r, timeout, become_atom_v, role));

  // Node 2's fetch arrives as a frame at its fetch session on node 1, which hands it on.
  fetch_session_options so;
  so.node = node_id{1};
  so.follower = node_id{2};
  so.fetcher = sys.spawn([] { return caf::behavior{[](int) {}}; });
  auto table = std::make_shared<const routing_table>(routing_table{{{"orders", 0}, *r}});
  so.routes = [table] { return table; };
  auto session = spawn_fetch_session(sys.sys(), so);
  sys.track(session);
  fetch_message m;
  m.replica = node_id{2};
  m.incarnation.fill(7);
  m.partitions.push_back(fetch_partition{{"orders", 0}, leader_epoch{3}, offset{0}});
  REQUIRE(sys.request<capnp_frame>(session, timeout, fetch_atom_v, encode_fetch(m)));

  // Caught up at once (an empty log): the leader proposes it, naming the process that fetched.
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (!*seen && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(20ms);
  REQUIRE(*seen);
  CHECK(*named == std::vector<incarnation_bytes>{incarnation_bytes{}, m.incarnation});
}
