// Replication between nodes: one actor system per node in one process, joined over 127.0.0.1 by
// CAF's middleman, each running a real replica manager behind its node endpoint
// (tests/support/replication_harness.hpp). A test controller sends LeaderAndIsr and answers
// AlterPartition with the same frames a controller quorum uses; faults come from link_faults.

#include <catch2/catch.hpp>

#include <cerrno>
#include <fstream>
#include <iterator>

#include "runtime/actor/caf_error.hpp"
#include "runtime/batch/record_batch_format.hpp"
#include "runtime/cluster/link_faults.hpp"
#include "runtime/storage/fault_injection_env.hpp"
#include "tests/support/replication_harness.hpp"

using namespace capstan;
using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

const topic_partition tp{"orders", 0};

errc code_of(const caf::error& e) { return from_caf_error(e).code; }

bytes batch_of(int i, int records = 5) { return make_batch(records, "r" + std::to_string(i), 1000 + i); }

harness_options options(int nodes, int32_t min_isr, int64_t lag_ms = 30000) {
  harness_options o;
  o.nodes = nodes;
  o.min_insync_replicas = min_isr;
  o.replica_lag_time_max_ms = lag_ms;
  return o;
}

} // namespace

TEST_CASE("batches produced with acks=all reach every follower, and the logs are identical",
          "[cluster][replication]") {
  replication_harness h(options(3, 2));
  h.elect(tp, 1, 1, {1, 2, 3}, {1, 2, 3});
  for (int i = 0; i < 50; ++i) {
    auto r = h.produce(1, tp, batch_of(i));
    REQUIRE(r);
    CHECK(r->base_offset == offset{i * 5});
  }
  // Acknowledged with acks=all: the HW passed every batch, so each follower had it.
  auto leader = h.status(1, tp);
  REQUIRE(leader);
  CHECK(leader->high_watermark == offset{250});
  CHECK(leader->isr == 3);
  REQUIRE(h.eventually([&] {
    auto s2 = h.status(2, tp);
    auto s3 = h.status(3, tp);
    return s2 && s3 && s2->log_end == offset{250} && s3->log_end == offset{250} &&
           s2->high_watermark == offset{250} && s3->high_watermark == offset{250};
  }));
  auto expected = h.log_records(1, tp);
  CHECK(expected.size() == 250);
  CHECK(h.log_records(2, tp) == expected);
  CHECK(h.log_records(3, tp) == expected);
  CHECK(h.consumed(1, tp) == expected);
}

TEST_CASE("an acks=all produce waits for a lagging ISR follower until it leaves the ISR",
          "[cluster][replication]") {
  replication_harness h(options(3, 2, 1500));
  h.elect(tp, 1, 1, {1, 2, 3}, {1, 2, 3});
  REQUIRE(h.produce(1, tp, batch_of(0)));
  // Node 3 can no longer reach the leader: its fetches are lost on the way.
  link_faults::instance().cut(node_id{1}, node_id{3});
  auto waiting = h.produce(1, tp, batch_of(1), -1, 500);
  REQUIRE_FALSE(waiting);
  CHECK(code_of(waiting.error()) == errc::request_timed_out);
  // After replica.lag.time.max.ms the leader asks the controller to drop node 3 from the ISR;
  // {1, 2} still meets min.insync.replicas = 2, so acks=all works again without node 3.
  REQUIRE(h.eventually([&] { return h.status(1, tp)->isr == 2; }));
  CHECK(h.committed(tp).isr == std::vector<node_id>{node_id{1}, node_id{2}});
  auto after = h.produce(1, tp, batch_of(2));
  REQUIRE(after);
  CHECK(after->base_offset == offset{10});
  CHECK(h.status(1, tp)->high_watermark == offset{15});
  // Node 3 returns, catches up, and rejoins the ISR.
  link_faults::instance().clear_all();
  REQUIRE(h.eventually([&] { return h.status(1, tp)->isr == 3; }));
  CHECK(h.committed(tp).isr.size() == 3);
  REQUIRE(h.eventually([&] { return h.status(3, tp)->log_end == offset{15}; }));
  CHECK(h.log_records(3, tp) == h.log_records(1, tp));
}

TEST_CASE("acks=all is NOT_ENOUGH_REPLICAS once the ISR is below min.insync.replicas",
          "[cluster][replication]") {
  replication_harness h(options(3, 2, 1000));
  h.elect(tp, 1, 1, {1, 2, 3}, {1, 2, 3});
  REQUIRE(h.produce(1, tp, batch_of(0)));
  link_faults::instance().cut(node_id{1}, node_id{2});
  link_faults::instance().cut(node_id{1}, node_id{3});
  // As in Kafka, a follower at the leader's log end counts as caught up however long it is
  // silent; the controller fences dead nodes. Once the log moves on, the silent ones lag.
  REQUIRE(h.produce(1, tp, batch_of(1), 1));
  REQUIRE(h.eventually([&] { return h.status(1, tp)->isr == 1; }));
  auto refused = h.produce(1, tp, batch_of(2));
  REQUIRE_FALSE(refused);
  CHECK(code_of(refused.error()) == errc::not_enough_replicas);
  // acks=1 still appends, but the HW stays: a consumer cannot see what only the leader has.
  CHECK(h.status(1, tp)->high_watermark == offset{5});
  CHECK(h.consumed(1, tp).size() == 5);
}

TEST_CASE("a consumer never reads at or above the high watermark", "[cluster][replication]") {
  replication_harness h(options(2, 1));
  h.elect(tp, 1, 1, {1, 2}, {1, 2});
  REQUIRE(h.produce(1, tp, batch_of(0)));
  link_faults::instance().cut(node_id{1}, node_id{2});
  // Appended on the leader but not replicated: above the HW.
  REQUIRE(h.produce(1, tp, batch_of(1), 1));
  auto s = h.status(1, tp);
  REQUIRE(s);
  CHECK(s->log_end == offset{10});
  CHECK(s->high_watermark == offset{5});
  auto seen = h.consumed(1, tp);
  REQUIRE(seen.size() == 5);
  for (const auto& r : seen) CHECK(r.off < s->high_watermark);
}

TEST_CASE("a leader that dies with uncommitted records is truncated when it returns as a follower",
          "[cluster][replication]") {
  // KIP-101: node 1 leads and appends records its followers never got; node 2 takes over at
  // epoch 2 and writes its own. When node 1 comes back it must drop its divergent tail (not keep
  // it because its old HW said so), and no committed record may be lost.
  replication_harness h(options(3, 2));
  h.elect(tp, 1, 1, {1, 2, 3}, {1, 2, 3});
  for (int i = 0; i < 4; ++i) REQUIRE(h.produce(1, tp, batch_of(i)));
  const auto committed = h.log_records(1, tp);
  // Cut both ways: a fetch already waiting at the leader brings nothing back either.
  link_faults::instance().cut(node_id{1}, node_id{2});
  link_faults::instance().cut(node_id{1}, node_id{3});
  REQUIRE(h.produce(1, tp, batch_of(100), 1));
  REQUIRE(h.produce(1, tp, batch_of(101), 1));
  h.stop(1, tp);
  link_faults::instance().clear_all();
  h.elect(tp, 2, 2, {1, 2, 3}, {2, 3}, {2, 3});
  for (int i = 200; i < 203; ++i) REQUIRE(h.produce(2, tp, batch_of(i)));
  h.rejoin(1, tp);
  REQUIRE(h.eventually([&] { return h.status(1, tp)->log_end == offset{35}; }));
  auto leader = h.log_records(2, tp);
  CHECK(h.log_records(1, tp) == leader);
  CHECK(h.log_records(3, tp) == leader);
  // Every committed record is still there, in place.
  REQUIRE(leader.size() >= committed.size());
  CHECK(std::vector<read_record>(leader.begin(), leader.begin() + committed.size()) == committed);
}

TEST_CASE("two replicas that restart one after the other keep every committed record",
          "[cluster][replication]") {
  // KIP-101 scenario 2: the follower restarts and truncates to its HW under the old rule, then the
  // leader dies and that follower becomes leader: the old rule lost a committed record. With
  // truncation by epoch the follower keeps what the leader has.
  replication_harness h(options(2, 1));
  h.elect(tp, 1, 1, {1, 2}, {1, 2});
  REQUIRE(h.produce(1, tp, batch_of(0)));
  REQUIRE(h.produce(1, tp, batch_of(1)));
  // The follower has both batches; its HW may still lag the leader's by a fetch.
  h.stop(2, tp);
  h.rejoin(2, tp);
  REQUIRE(h.eventually([&] { return h.status(2, tp)->log_end == offset{10}; }));
  h.stop(1, tp);
  h.elect(tp, 2, 2, {1, 2}, {2}, {2});
  CHECK(h.consumed(2, tp).size() == 10);
  h.rejoin(1, tp);
  REQUIRE(h.produce(2, tp, batch_of(2)));
  REQUIRE(h.eventually([&] { return h.status(1, tp)->log_end == offset{15}; }));
  CHECK(h.log_records(1, tp) == h.log_records(2, tp));
}

TEST_CASE("a follower that was ahead of the new leader drops what the leader never had",
          "[cluster][replication]") {
  replication_harness h(options(3, 1));
  h.elect(tp, 1, 1, {1, 2, 3}, {1, 2, 3});
  REQUIRE(h.produce(1, tp, batch_of(0)));
  REQUIRE(h.eventually([&] { return h.status(3, tp)->log_end == offset{5}; }));
  // Node 3 falls behind (cut off both ways, so a fetch it already sent brings nothing back);
  // node 2 keeps up, then gets more than node 3 ever sees.
  link_faults::instance().cut(node_id{1}, node_id{3});
  REQUIRE(h.produce(1, tp, batch_of(1), 1));
  REQUIRE(h.eventually([&] { return h.status(2, tp)->log_end == offset{10}; }));
  // Node 1 dies; node 3 (behind) is elected, writes in epoch 2; node 2 was ahead.
  h.stop(1, tp);
  link_faults::instance().clear_all();
  h.elect(tp, 3, 2, {1, 2, 3}, {2, 3}, {2, 3});
  REQUIRE(h.produce(3, tp, batch_of(300)));
  REQUIRE(h.eventually([&] { return h.status(2, tp)->log_end == offset{10}; }));
  CHECK(h.log_records(2, tp) == h.log_records(3, tp));
  CHECK(h.log_records(2, tp).back().value == std::string("r300-4"));
}

TEST_CASE("a stale controller epoch or leader epoch changes nothing", "[cluster][replication]") {
  replication_harness h(options(2, 1));
  h.elect(tp, 1, 3, {1, 2}, {1, 2});
  REQUIRE(h.produce(1, tp, batch_of(0)));
  // An older leader epoch is refused by both nodes: node 1 stays leader at epoch 3.
  auto errors = h.try_elect(tp, 2, 2, {1, 2}, {1, 2});
  REQUIRE(errors.size() == 2);
  for (const auto& e : errors) CHECK(e.error == errc::fenced_leader_epoch);
  auto s = h.status(1, tp);
  REQUIRE(s);
  CHECK(s->leader);
  CHECK(s->epoch == leader_epoch{3});

  // A controller at an older epoch is refused whole, even with a newer leader epoch.
  auto stale = h.try_elect_as(0, tp, 2, 4, {1, 2}, {1, 2});
  REQUIRE(stale.size() == 2);
  for (const auto& e : stale) CHECK(e.error == errc::stale_controller_epoch);
  s = h.status(1, tp);
  REQUIRE(s);
  CHECK(s->leader);
  CHECK(s->epoch == leader_epoch{3});
  auto follower = h.status(2, tp);
  REQUIRE(follower);
  CHECK_FALSE(follower->leader);
}

TEST_CASE("a follower that replicated a producer's batches deduplicates its retry once it leads",
          "[cluster][replication][idempotence]") {
  // The follower replays the leader's batches into its producer state without checks, so after
  // the leader dies a retry of a batch the old leader wrote is answered with its first offset by
  // the new one, not appended twice (docs/idempotence.md).
  replication_harness h(options(3, 2));
  h.elect(tp, 1, 1, {1, 2, 3}, {1, 2, 3});
  const auto first = make_producer_batch({42, 0, 0}, 5, "p0", 1000);
  const auto second = make_producer_batch({42, 0, 5}, 5, "p1", 1001);
  auto r1 = h.produce(1, tp, first);
  REQUIRE(r1);
  CHECK(r1->base_offset == offset{0});
  auto r2 = h.produce(1, tp, second);
  REQUIRE(r2);
  CHECK(r2->base_offset == offset{5});
  REQUIRE(h.eventually([&] { return h.status(2, tp)->log_end == offset{10}; }));

  h.stop(1, tp);
  h.elect(tp, 2, 2, {1, 2, 3}, {2, 3}, {2, 3});
  auto retry = h.produce(2, tp, second);
  REQUIRE(retry);
  CHECK(retry->base_offset == offset{5});
  auto gap = h.produce(2, tp, make_producer_batch({42, 0, 20}, 1, "p2", 1002));
  REQUIRE_FALSE(gap);
  CHECK(code_of(gap.error()) == errc::out_of_order_sequence_number);
  auto next = h.produce(2, tp, make_producer_batch({42, 0, 10}, 1, "p2", 1002));
  REQUIRE(next);
  CHECK(next->base_offset == offset{10});
  CHECK(h.log_records(2, tp).size() == 11);
  REQUIRE(h.eventually([&] { return h.status(3, tp)->log_end == offset{11}; }));
  CHECK(h.log_records(3, tp) == h.log_records(2, tp));
}

namespace {

bytes file_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return bytes(std::istreambuf_iterator<char>(in), {});
}

} // namespace

TEST_CASE("a follower never appends a batch whose bits the leader's disk flipped, and takes it "
          "once the leader reads it right",
          "[cluster][replication][storage]") {
  fault_injection_env faults;
  scoped_storage_env installed(faults);
  replication_harness h(options(2, 1));
  const auto leader_dir = h.node(1).data_dir / "orders-0";
  const auto leader_log = leader_dir / "00000000000000000000.log";
  const auto follower_log = h.node(2).data_dir / "orders-0" / "00000000000000000000.log";
  // The leader's segments are read with pread, where the env flips bits (never mapped).
  faults.fail(leader_dir.string(), storage_op::map, ENODEV);
  h.elect(tp, 1, 1, {1, 2}, {1, 2});
  REQUIRE(h.produce(1, tp, batch_of(0)));
  REQUIRE(h.eventually([&] { return h.status(2, tp)->log_end == offset{5}; }));

  // A batch the follower has not fetched, too large for the copy of the last append that the
  // log keeps in memory: every read of it goes to the leader's disk. Its bit flips before it is
  // written (batches start 8-byte aligned), so no fetch can read it right first.
  const auto stored = file_bytes(leader_log);
  const size_t damaged = batch_format::align_up(stored.size()) + batch_format::records_at + 10;
  faults.flip(leader_log.string(), damaged, 0x04);
  const auto injected_before = faults.injected();
  const auto large = batch_of(1, 5000);
  REQUIRE(large.size() > 64 * 1024);
  REQUIRE(h.produce(1, tp, large, 1));

  // Fetched at least twice with the flipped bit (two reads each: batch headers, then the batches):
  // refused every time, nothing appended, and the leader keeps serving. Each refusal costs a
  // back-off: slow on a loaded machine, hence the longer bound.
  REQUIRE(h.eventually([&] { return faults.injected() >= injected_before + 4; }, 60s));
  auto follower = h.status(2, tp);
  REQUIRE(follower);
  CHECK(follower->log_end == offset{5});
  CHECK(h.log_records(2, tp).size() == 5);
  // Byte for byte the first batch (at position 0 on both), and nothing after it.
  CHECK(file_bytes(follower_log) == stored);
  CHECK(h.status(1, tp)->leader);

  // The leader's copy reads right again: the follower catches up with the batch as stored.
  faults.clear();
  REQUIRE(h.eventually([&] { return h.status(2, tp)->log_end == offset{5005}; }));
  CHECK(file_bytes(follower_log) == file_bytes(leader_log));
  CHECK(h.log_records(2, tp) == h.log_records(1, tp));
}
