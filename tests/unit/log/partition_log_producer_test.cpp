// The partition log's idempotent-producer state (docs/idempotence.md): a leader answers a
// producer's retry with the first offsets and refuses gaps and old epochs; the state survives a
// clean close, a crash and a damaged snapshot, follows truncation and retention, and expires.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>

#include <caf/all.hpp>

#include "actors/log/partition_log_actor.hpp"
#include "runtime/actor/caf_error.hpp"
#include "runtime/batch/record_batch_format.hpp"
#include "runtime/storage/producer_snapshot.hpp"
#include "tests/support/log_harness.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace capstan::test;

namespace {

errc code_of(const caf::error& e) { return from_caf_error(e).code; }

std::set<offset> snapshots_in(const std::filesystem::path& dir) {
  auto ends = list_producer_snapshots(dir);
  REQUIRE(ends);
  return {ends->begin(), ends->end()};
}

// One segment per batch: every append after the first rolls, and so writes a snapshot.
log_config rolling_every_batch() {
  log_config c;
  c.segment_bytes = 1;
  return c;
}

} // namespace

TEST_CASE("a producer's resent batch is answered with its first offsets and stored once",
          "[log][idempotence]") {
  temp_dir dir;
  log_harness log(dir.path());
  log.open();
  const auto first = make_producer_batch({7, 0, 0}, 3, "a", log.now());
  auto a = log.append(first);
  REQUIRE(a);
  CHECK(a->first == offset{0});
  CHECK_FALSE(a->duplicate);
  REQUIRE(log.append(make_batch(2, "plain", log.now())));

  auto again = log.append(first);
  REQUIRE(again);
  CHECK(again->duplicate);
  CHECK(again->first == offset{0});
  CHECK(again->last == offset{2});
  CHECK(log.info().log_end == offset{5});
  CHECK(log.read_all().size() == 5);

  // The next sequence goes on from the first batch's last one.
  auto next = log.append(make_producer_batch({7, 0, 3}, 2, "b", log.now()));
  REQUIRE(next);
  CHECK(next->first == offset{5});
  CHECK_FALSE(next->duplicate);
}

TEST_CASE("a sequence gap is OUT_OF_ORDER_SEQUENCE_NUMBER and appends nothing",
          "[log][idempotence]") {
  temp_dir dir;
  log_harness log(dir.path());
  log.open();
  REQUIRE(log.append(make_producer_batch({7, 0, 0}, 3, "a", log.now())));
  auto gap = log.append(make_producer_batch({7, 0, 5}, 1, "b", log.now()));
  REQUIRE_FALSE(gap);
  CHECK(code_of(gap.error()) == errc::out_of_order_sequence_number);
  CHECK(log.info().log_end == offset{3});
  CHECK(log.append(make_producer_batch({7, 0, 3}, 1, "b", log.now())));
}

TEST_CASE("a batch of an older producer epoch is INVALID_PRODUCER_EPOCH", "[log][idempotence]") {
  temp_dir dir;
  log_harness log(dir.path());
  log.open();
  REQUIRE(log.append(make_producer_batch({7, 1, 0}, 2, "a", log.now())));
  auto old = log.append(make_producer_batch({7, 0, 2}, 1, "b", log.now()));
  REQUIRE_FALSE(old);
  CHECK(code_of(old.error()) == errc::invalid_producer_epoch);
  CHECK(log.info().log_end == offset{2});
}

TEST_CASE("a producer's batch must be the only batch of a leader's append", "[log][idempotence]") {
  temp_dir dir;
  log_harness log(dir.path());
  log.open();
  bytes two = make_producer_batch({7, 0, 0}, 1, "a", log.now());
  two.resize(batch_format::align_up(two.size()));
  const auto second = make_batch(1, "b", log.now());
  two.insert(two.end(), second.begin(), second.end());
  auto r = log.append(two);
  REQUIRE_FALSE(r);
  CHECK(code_of(r.error()) == errc::invalid_record);
  CHECK(log.info().log_end == offset{0});
}

TEST_CASE("a follower's append replays its producers, so a retry is a duplicate once it leads",
          "[log][idempotence]") {
  temp_dir leader_dir;
  temp_dir follower_dir;
  log_harness leader(leader_dir.path());
  log_harness follower(follower_dir.path());
  leader.open();
  follower.open();
  const auto batch = make_producer_batch({7, 0, 0}, 3, "a", leader.now());
  REQUIRE(leader.append(batch));
  auto slice = leader.read(offset{0});
  REQUIRE(slice);
  auto bytes_read = slice->bytes();
  REQUIRE(follower.append(bytes(bytes_read.begin(), bytes_read.end()), append_origin::replication));

  auto retry = follower.append(batch);
  REQUIRE(retry);
  CHECK(retry->duplicate);
  CHECK(retry->first == offset{0});
  auto gap = follower.append(make_producer_batch({7, 0, 9}, 1, "b", follower.now()));
  REQUIRE_FALSE(gap);
  CHECK(code_of(gap.error()) == errc::out_of_order_sequence_number);
}

TEST_CASE("a clean close snapshots the producers at the log end, and a reopen still deduplicates",
          "[log][idempotence]") {
  temp_dir dir;
  log_harness log(dir.path());
  log.open();
  const auto batch = make_producer_batch({7, 0, 0}, 3, "a", log.now());
  REQUIRE(log.append(batch));
  REQUIRE(log.append(make_batch(2, "plain", log.now())));
  const auto point = log.close();
  CHECK(snapshots_in(dir.path()) == std::set<offset>{offset{5}});

  log.open(point);
  auto retry = log.append(batch);
  REQUIRE(retry);
  CHECK(retry->duplicate);
  CHECK(retry->first == offset{0});
  CHECK(log.info().log_end == offset{5});
}

TEST_CASE("after a crash the producers are rebuilt from the roll's snapshot and the log after it",
          "[log][idempotence]") {
  temp_dir dir;
  log_harness log(dir.path(), rolling_every_batch());
  log.open();
  const auto a = make_producer_batch({7, 0, 0}, 3, "a", log.now());
  const auto b = make_producer_batch({8, 0, 0}, 2, "b", log.now());
  REQUIRE(log.append(a));
  REQUIRE(log.append(b)); // rolls at 3: the snapshot there holds producer 7 only
  CHECK(snapshots_in(dir.path()) == std::set<offset>{offset{3}});
  REQUIRE(log.flush());
  log.crash();

  log.open();
  CHECK(snapshots_in(dir.path()) == std::set<offset>{offset{3}});
  auto retry_a = log.append(a);
  REQUIRE(retry_a);
  CHECK(retry_a->duplicate);
  CHECK(retry_a->first == offset{0});
  auto retry_b = log.append(b);
  REQUIRE(retry_b);
  CHECK(retry_b->duplicate);
  CHECK(retry_b->first == offset{3});
  auto gap = log.append(make_producer_batch({8, 0, 5}, 1, "c", log.now()));
  REQUIRE_FALSE(gap);
  CHECK(code_of(gap.error()) == errc::out_of_order_sequence_number);
}

TEST_CASE("a damaged snapshot is ignored and removed, and the producers rebuilt from the log",
          "[log][idempotence]") {
  temp_dir dir;
  log_harness log(dir.path());
  log.open();
  const auto batch = make_producer_batch({7, 0, 0}, 3, "a", log.now());
  REQUIRE(log.append(batch));
  const auto point = log.close();
  const auto file = dir / producer_snapshot_name(offset{3});
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(12);
    f.put('\x5a');
  }
  REQUIRE_FALSE(read_producer_snapshot(file));

  log.open(point);
  CHECK(snapshots_in(dir.path()).empty());
  auto retry = log.append(batch);
  REQUIRE(retry);
  CHECK(retry->duplicate);
  CHECK(retry->first == offset{0});
}

TEST_CASE("truncation forgets the producers' batches past the new end and the snapshots above it",
          "[log][idempotence]") {
  temp_dir dir;
  log_harness log(dir.path(), rolling_every_batch());
  log.open();
  REQUIRE(log.append(make_producer_batch({7, 0, 0}, 2, "a", log.now())));
  const auto second = make_producer_batch({7, 0, 2}, 2, "b", log.now());
  REQUIRE(log.append(second));
  REQUIRE(log.append(make_producer_batch({7, 0, 4}, 2, "c", log.now())));
  CHECK(snapshots_in(dir.path()) == std::set<offset>{offset{2}, offset{4}});

  REQUIRE(log.truncate(offset{2}));
  CHECK(snapshots_in(dir.path()) == std::set<offset>{offset{2}});
  // The second batch is gone, so its resend is new, in sequence, and appended again.
  auto resent = log.append(second);
  REQUIRE(resent);
  CHECK_FALSE(resent->duplicate);
  CHECK(resent->first == offset{2});
  CHECK(log.info().log_end == offset{4});
}

TEST_CASE("retention removes the producer snapshots below the log start but keeps the newest",
          "[log][idempotence]") {
  temp_dir dir;
  auto config = rolling_every_batch();
  config.retention_bytes = 0;
  log_harness log(dir.path(), config);
  log.open();
  const auto first = make_producer_batch({7, 0, 0}, 1, "a", log.now());
  REQUIRE(log.append(first));
  REQUIRE(log.append(make_producer_batch({7, 0, 1}, 1, "b", log.now())));
  REQUIRE(log.append(make_producer_batch({7, 0, 2}, 1, "c", log.now())));
  CHECK(snapshots_in(dir.path()) == std::set<offset>{offset{1}, offset{2}});

  auto deleted = log.retain();
  REQUIRE(deleted);
  CHECK(*deleted == 2);
  CHECK(log.info().log_start == offset{2});
  CHECK(snapshots_in(dir.path()) == std::set<offset>{offset{2}});
  // The producer's state outlives its deleted batches (KIP-360): a retry of one is still a
  // duplicate, and the producer goes on in sequence.
  auto retry = log.append(first);
  REQUIRE(retry);
  CHECK(retry->duplicate);
  CHECK(retry->first == offset{0});
  auto next = log.append(make_producer_batch({7, 0, 3}, 1, "d", log.now()));
  REQUIRE(next);
  CHECK(next->first == offset{3});
}

TEST_CASE("a producer idle for producer.id.expiration.ms is forgotten", "[log][idempotence]") {
  temp_dir dir;
  log_config config;
  config.producer_id_expiration_ms = 60000;
  log_harness log(dir.path(), config);
  log.open();
  REQUIRE(log.append(make_producer_batch({7, 0, 0}, 1, "a", log.now())));
  log.advance_clock(producer_expiration_check_interval_ms);
  const auto later = make_producer_batch({7, 0, 9}, 1, "b", log.now());
  auto before = log.append(later);
  REQUIRE_FALSE(before);
  CHECK(code_of(before.error()) == errc::out_of_order_sequence_number);

  log.tick();
  // Unknown again, so any sequence starts it afresh (KIP-360).
  auto after = log.append(later);
  REQUIRE(after);
  CHECK(after->first == offset{1});
}
