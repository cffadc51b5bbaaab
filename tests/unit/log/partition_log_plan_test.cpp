// The partition log's bookkeeping without actors or files (actors/log/partition_log.hpp): what an
// append validates, the offsets and epochs it stamps, where it rolls, what truncation, retention
// and a flush plan, and how the idempotent-producer state answers a resent or skipped batch.

#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "actors/log/partition_log.hpp"
#include "runtime/batch/record_batch_view.hpp"
#include "tests/support/log_builder.hpp"

using namespace capstan;
using namespace capstan::test;

namespace {

constexpr timestamp_ms start_ms = 1'000'000;

// A log of one empty segment at offset 0.
partition_log empty_log(log_config config = {}) {
  std::vector<log_segment> segments;
  segments.push_back(log_segment{std::make_shared<segment_slot>(),
                                 segment_meta{offset{0}, offset{0}, 0, no_timestamp, start_ms}});
  return partition_log("t-0 on node 1", std::move(config), std::move(segments), offset{0},
                       leader_epoch_cache{}, producer_state{}, start_ms);
}

append_request leader_append(bytes batch, leader_epoch epoch = leader_epoch{3}) {
  return append_request{to_buffer(std::move(batch)), append_origin::leader, epoch};
}

// `batch` as a leader stored it at `base` in `epoch`: what a follower fetches.
append_request replicated(bytes batch, int64_t base, leader_epoch epoch = leader_epoch{3}) {
  set_base_offset(std::span<uint8_t>{batch}, offset{base});
  set_partition_leader_epoch(std::span<uint8_t>{batch}, epoch);
  return append_request{to_buffer(std::move(batch)), append_origin::replication, leader_epoch{0}};
}

std::vector<segment_roll> rolls_of(const append_plan& plan) {
  std::vector<segment_roll> out;
  for (const auto& s : plan.steps)
    if (const auto* r = std::get_if<segment_roll>(&s)) out.push_back(*r);
  return out;
}

std::vector<segment_write> writes_of(const append_plan& plan) {
  std::vector<segment_write> out;
  for (const auto& s : plan.steps)
    if (const auto* w = std::get_if<segment_write>(&s)) out.push_back(*w);
  return out;
}

} // namespace

TEST_CASE("a leader append assigns the next offsets and stamps them and its epoch into the batch",
          "[log][partition_log]") {
  auto log = empty_log();
  auto first = leader_append(make_batch(3, "a", start_ms));
  auto a = log.append(first, start_ms);
  REQUIRE(a);
  CHECK(a->result.first == offset{0});
  CHECK(a->result.last == offset{2});
  CHECK(a->result.record_count == 3);
  CHECK(a->save_epochs); // epoch 3 starts at offset 0

  auto second = leader_append(make_batch(2, "b", start_ms));
  auto b = log.append(second, start_ms);
  REQUIRE(b);
  CHECK(b->result.first == offset{3});
  CHECK(b->result.last == offset{4});
  CHECK_FALSE(b->save_epochs);
  CHECK(log.log_end() == offset{5});

  const auto writes = writes_of(*b);
  REQUIRE(writes.size() == 1);
  CHECK(writes[0].slot == log.active_slot());
  auto stored = record_batch_view::parse(writes[0].part.view(), 1 << 20);
  REQUIRE(stored);
  CHECK(stored->base_offset() == offset{3});
  CHECK(stored->partition_leader_epoch() == leader_epoch{3});
  CHECK(log.info().size_bytes > 0);
}

TEST_CASE("a bad batch is refused with its named error and changes nothing",
          "[log][partition_log]") {
  auto log = empty_log();
  auto batch = make_batch(2, "a", start_ms);
  batch[batch.size() - 1] ^= 0xff; // breaks the CRC
  auto bad = leader_append(batch);
  auto r = log.append(bad, start_ms);
  REQUIRE_FALSE(r);
  CHECK(r.err().code == errc::corrupt_message);
  CHECK(log.log_end() == offset{0});
  CHECK(log.epochs().entries().empty());

  append_request empty{batch_buffer{}, append_origin::leader, leader_epoch{1}};
  auto e = log.append(empty, start_ms);
  REQUIRE_FALSE(e);
  CHECK(e.err().code == errc::corrupt_message);
}

TEST_CASE("a replicated batch keeps its offsets and epoch and must follow the log end",
          "[log][partition_log]") {
  auto log = empty_log();
  auto at_zero = replicated(make_batch(4, "a", start_ms), 0, leader_epoch{2});
  auto a = log.append(at_zero, start_ms);
  REQUIRE(a);
  CHECK(a->result.first == offset{0});
  CHECK(a->save_epochs);
  CHECK(log.end_offset_for(leader_epoch{2}) == epoch_end{leader_epoch{2}, offset{4}});

  auto behind = replicated(make_batch(1, "old", start_ms), 2);
  auto r = log.append(behind, start_ms);
  REQUIRE_FALSE(r);
  CHECK(r.err().code == errc::offset_out_of_range);
  CHECK(log.log_end() == offset{4});
}

TEST_CASE("segment.bytes rolls before the batch that would pass it, with a producer snapshot there",
          "[log][partition_log]") {
  log_config config;
  config.segment_bytes = 1; // any non-empty segment is full
  auto log = empty_log(config);
  auto first = leader_append(make_batch(3, "a", start_ms));
  auto a = log.append(first, start_ms);
  REQUIRE(a);
  CHECK(rolls_of(*a).empty()); // an empty active segment never rolls
  const auto old_slot = log.active_slot();

  auto second = leader_append(make_batch(2, "b", start_ms));
  auto b = log.append(second, start_ms);
  REQUIRE(b);
  const auto rolls = rolls_of(*b);
  REQUIRE(rolls.size() == 1);
  CHECK(std::holds_alternative<segment_roll>(b->steps.front())); // the roll comes before the write
  CHECK(rolls[0].base == offset{3});
  CHECK(rolls[0].sealed == old_slot);
  CHECK(rolls[0].created == log.active_slot());
  CHECK(rolls[0].producers->end_offset() == offset{3});
  CHECK(writes_of(*b).at(0).slot == log.active_slot());
  CHECK(log.info().segment_count == 2);

  // The rolled segment is flushed in the background; then the recovery point moves to its end.
  log.raise_recovery_point(rolls[0].base, log.generation());
  CHECK(log.recovery_point() == offset{3});
}

TEST_CASE("a roll flushes every segment below the new base that holds data past the recovery "
          "point, as the recovery point then moves there",
          "[log][partition_log]") {
  // Three segments a crash left unflushed: recovery at open found their data, but it may be in
  // the page cache only.
  std::vector<log_segment> segments;
  for (const auto& [base, next] : {std::pair{0, 3}, std::pair{3, 5}, std::pair{5, 7}})
    segments.push_back(log_segment{
        std::make_shared<segment_slot>(),
        segment_meta{offset{base}, offset{next}, 100 * (next - base), start_ms, start_ms}});
  std::vector<segment_ref> slots;
  for (const auto& s : segments) slots.push_back(s.slot);
  log_config config;
  config.segment_bytes = 1; // the next append rolls
  partition_log log("t-0 on node 1", config, std::move(segments), offset{3}, leader_epoch_cache{},
                    producer_state{}, start_ms);

  auto a = leader_append(make_batch(1, "a", start_ms));
  auto plan = log.append(a, start_ms);
  REQUIRE(plan);
  const auto rolls = rolls_of(*plan);
  REQUIRE(rolls.size() == 1);
  CHECK(rolls[0].base == offset{7});
  CHECK(rolls[0].sealed == slots[2]);
  // Not the first segment: it ends at the recovery point.
  CHECK(rolls[0].flushed == std::vector<segment_ref>{slots[1], slots[2]});
  log.raise_recovery_point(rolls[0].base, log.generation());
  CHECK(log.recovery_point() == offset{7});
  // What is left to flush is the new active segment's batch.
  CHECK(log.plan_flush().segments == std::vector<segment_ref>{log.active_slot()});
}

TEST_CASE("segment.ms rolls once the active segment is older than it", "[log][partition_log]") {
  log_config config;
  config.segment_ms = 100;
  auto log = empty_log(config);
  auto a = leader_append(make_batch(1, "a", start_ms));
  REQUIRE(log.append(a, start_ms));
  auto b = leader_append(make_batch(1, "b", start_ms));
  auto young = log.append(b, start_ms + 99);
  REQUIRE(young);
  CHECK(rolls_of(*young).empty());
  auto c = leader_append(make_batch(1, "c", start_ms));
  auto old = log.append(c, start_ms + 100);
  REQUIRE(old);
  REQUIRE(rolls_of(*old).size() == 1);
  CHECK(rolls_of(*old)[0].base == offset{2});
}

TEST_CASE("truncation drops the segments from the cut, then the end, epochs and producers follow",
          "[log][partition_log]") {
  log_config config;
  config.segment_bytes = 1;
  auto log = empty_log(config);
  for (int epoch = 1; epoch <= 3; ++epoch) {
    auto req = leader_append(make_producer_batch({7, 0, 2 * (epoch - 1)}, 2, "p", start_ms),
                             leader_epoch{epoch});
    REQUIRE(log.append(req, start_ms)); // segments at 0, 2 and 4, one epoch each
  }
  REQUIRE(log.info().segment_count == 3);
  const auto flush = log.plan_flush();
  log.raise_recovery_point(flush.target, flush.generation);
  REQUIRE(log.recovery_point() == offset{6});

  const auto dropped = log.drop_segments_from(offset{3});
  CHECK(dropped.size() == 1);
  REQUIRE_FALSE(log.empty());
  // The worker cut the active segment (base 2) below offset 3: its batch at 2..3 went whole.
  log.active_truncated(segment_meta{offset{2}, offset{2}, 0, no_timestamp, start_ms});
  CHECK(log.truncated(offset{2}));
  CHECK(log.log_end() == offset{2});
  CHECK(log.recovery_point() == offset{2});
  CHECK(log.epochs().latest()->epoch == leader_epoch{1});
  REQUIRE(log.producers().find(7));
  CHECK(log.producers().find(7)->last_sequence() == 1);

  // A flush planned before the truncation must not raise the recovery point past the new end.
  log.raise_recovery_point(flush.target, flush.generation);
  CHECK(log.recovery_point() == offset{2});
}

TEST_CASE("a truncation that drops every segment restarts the log empty at the cut",
          "[log][partition_log]") {
  auto log = empty_log();
  auto req = leader_append(make_batch(5, "a", start_ms));
  REQUIRE(log.append(req, start_ms));
  CHECK(log.forget_history());
  CHECK(log.drop_segments_from(offset{std::numeric_limits<int64_t>::min()}).size() == 1);
  REQUIRE(log.empty());
  const auto slot = log.restart_at(offset{100}, start_ms);
  CHECK_FALSE(log.truncated(offset{100}));
  CHECK(slot == log.active_slot());
  CHECK(log.log_start() == offset{100});
  CHECK(log.log_end() == offset{100});
  CHECK(log.producers().producers().empty());
}

TEST_CASE("retention deletes the oldest segments, moves the log start and changes the layout",
          "[log][partition_log]") {
  log_config config;
  config.segment_bytes = 1;
  config.retention_bytes = 1;
  auto log = empty_log(config);
  for (int i = 0; i < 3; ++i) {
    auto req = leader_append(make_batch(2, "r", start_ms));
    REQUIRE(log.append(req, start_ms));
  }
  const auto gen = log.generation();
  auto plan = log.plan_retention(start_ms);
  REQUIRE(plan.deleted.size() == 2); // never the active segment
  CHECK(plan.deleted[0].meta.base == offset{0});
  CHECK(plan.deleted[1].meta.base == offset{2});
  CHECK(plan.log_start == offset{4});
  CHECK(log.log_start() == offset{4});
  CHECK(log.generation() == gen + 1);
  CHECK(log.info().segment_count == 1);
  CHECK(log.plan_retention(start_ms).deleted.empty());
}

TEST_CASE("with cleanup.policy compact,delete retention waits while a compaction reads the "
          "segments, then deletes them",
          "[log][partition_log]") {
  log_config config;
  config.segment_bytes = 1;
  config.retention_bytes = 1;
  config.cleanup = cleanup_policy::compact_delete;
  auto log = empty_log(config);
  for (int i = 0; i < 3; ++i) {
    auto req = leader_append(make_batch(2, "r", start_ms, 2));
    REQUIRE(log.append(req, start_ms));
  }
  REQUIRE(log.plan_compaction(start_ms));
  size_t expired = 0;
  CHECK_FALSE(log.due(start_ms + config.retention_check_interval_ms, expired).retention);
  auto waiting = log.plan_retention(start_ms);
  CHECK(waiting.deleted.empty());
  CHECK(waiting.log_start == offset{0});
  log.compaction_abandoned();
  CHECK(log.due(start_ms + config.retention_check_interval_ms, expired).retention);
  CHECK(log.plan_retention(start_ms).deleted.size() == 2);
}

TEST_CASE("a producer's resent batch gets its first offsets back and plans no write",
          "[log][partition_log]") {
  auto log = empty_log();
  const auto batch = make_producer_batch({7, 0, 0}, 3, "p", start_ms);
  auto first = leader_append(batch);
  REQUIRE(log.append(first, start_ms));
  auto plain = leader_append(make_batch(1, "x", start_ms));
  REQUIRE(log.append(plain, start_ms));

  auto again = leader_append(batch);
  auto dup = log.append(again, start_ms);
  REQUIRE(dup);
  CHECK(dup->result.duplicate);
  CHECK(dup->result.first == offset{0});
  CHECK(dup->result.last == offset{2});
  CHECK(dup->steps.empty());
  CHECK(log.log_end() == offset{4});

  auto gap = leader_append(make_producer_batch({7, 0, 5}, 1, "gap", start_ms));
  auto r = log.append(gap, start_ms);
  REQUIRE_FALSE(r);
  CHECK(r.err().code == errc::out_of_order_sequence_number);
  CHECK(log.log_end() == offset{4});
}

TEST_CASE("a producer that expired while the log was closed is unknown when it opens again",
          "[log][partition_log]") {
  log_config config;
  config.producer_id_expiration_ms = 1000;
  auto log = empty_log(config);
  auto old = leader_append(make_producer_batch({7, 0, 0}, 1, "old", start_ms));
  REQUIRE(log.append(old, start_ms));
  auto recent = leader_append(make_producer_batch({8, 0, 0}, 1, "recent", start_ms + 500));
  REQUIRE(log.append(recent, start_ms + 500));

  std::vector<log_segment> segments;
  segments.push_back(
      log_segment{std::make_shared<segment_slot>(),
                  segment_meta{offset{0}, offset{2}, 200, start_ms + 500, start_ms}});
  partition_log reopened("t-0 on node 1", config, std::move(segments), offset{2},
                         leader_epoch_cache{}, log.producers(), start_ms + 1000);
  CHECK(reopened.producers().find(7) == nullptr);
  CHECK(reopened.producers().find(8) != nullptr);
}

TEST_CASE("flush.messages asks for a flush with the append that reaches it",
          "[log][partition_log]") {
  log_config config;
  config.flush_messages = 5;
  auto log = empty_log(config);
  auto a = leader_append(make_batch(3, "a", start_ms));
  CHECK_FALSE(log.append(a, start_ms)->flush);
  auto b = leader_append(make_batch(2, "b", start_ms));
  CHECK(log.append(b, start_ms)->flush);
  const auto plan = log.plan_flush();
  CHECK(plan.target == offset{5});
  CHECK(plan.segments.size() == 1);
  auto c = leader_append(make_batch(1, "c", start_ms));
  CHECK_FALSE(log.append(c, start_ms)->flush); // plan_flush reset the count
}

namespace {

append_request validated_append(const bytes& batch) {
  auto v = validated_batch::validate(batch, 1 << 20);
  REQUIRE(v);
  return append_request{std::move(*v), append_origin::leader, leader_epoch{3}};
}

// Changes one byte of the first record's value: the framing stays intact, the CRC no longer
// matches.
void damage_value(const batch_buffer& buf, const std::string& value) {
  auto* begin = buf.data->data() + buf.begin;
  auto* end = buf.data->data() + buf.end;
  auto* at = std::search(begin, end, value.begin(), value.end());
  REQUIRE(at != end);
  *at ^= 0x01;
}

} // namespace

TEST_CASE("a leader append of a validated batch does not validate it again",
          "[log][partition_log][validation]") {
  auto log = empty_log();
  const auto batch = make_batch(2, "once", start_ms);
  auto trusted = validated_append(batch);
  // Damage the bytes after validation: only a second parse could notice.
  damage_value(buffer_of(trusted.batches), "once-0");
  auto r = log.append(trusted, start_ms);
  REQUIRE(r);
  CHECK(r->result.first == offset{0});
  CHECK(r->result.record_count == 2);

  // The same bytes as a plain buffer (an internal producer's) are validated in full.
  auto raw = leader_append(batch);
  damage_value(buffer_of(raw.batches), "once-0");
  auto refused = log.append(raw, start_ms);
  REQUIRE_FALSE(refused);
  CHECK(refused.err().code == errc::corrupt_message);
  CHECK(log.log_end() == offset{2});
}

TEST_CASE("a validated batch outside the partition's limits gets the same named error as a raw one",
          "[log][partition_log][validation]") {
  log_config config;
  config.timestamp_before_max_ms = 1000;
  auto log = empty_log(config);
  const auto old = make_batch(1, "old", start_ms - 5000);
  auto validated = validated_append(old);
  auto v = log.append(validated, start_ms);
  REQUIRE_FALSE(v);
  CHECK(v.err().code == errc::invalid_timestamp);
  auto raw = leader_append(old);
  auto r = log.append(raw, start_ms);
  REQUIRE_FALSE(r);
  CHECK(v.err().message == r.err().message);

  config.timestamp_before_max_ms = std::numeric_limits<int64_t>::max();
  const auto big = make_batch(4, "big", start_ms, 0, 200);
  config.max_message_bytes = static_cast<int64_t>(big.size()) - 1;
  auto small = empty_log(config);
  auto too_large = validated_append(big);
  auto t = small.append(too_large, start_ms);
  REQUIRE_FALSE(t);
  CHECK(t.err().code == errc::message_too_large);
  CHECK(small.log_end() == offset{0});
}

TEST_CASE("a flush covers segments with data past the recovery point and every truncation's cut, "
          "never an empty segment",
          "[log][partition_log]") {
  auto log = empty_log();
  CHECK(log.plan_flush().segments.empty());

  auto a = leader_append(make_batch(5, "a", start_ms));
  REQUIRE(log.append(a, start_ms));
  auto flush = log.plan_flush();
  CHECK(flush.segments.size() == 1);
  log.raise_recovery_point(flush.target, flush.generation);
  REQUIRE(log.recovery_point() == offset{5});
  CHECK(log.plan_flush().segments.empty());

  // A follower cuts the flushed batch away whole: nothing is left past the recovery point, but
  // the cut itself must reach the disk, once.
  REQUIRE(log.drop_segments_from(offset{1}).empty());
  log.active_truncated(segment_meta{offset{0}, offset{0}, 0, no_timestamp, start_ms});
  (void)log.truncated(offset{0});
  CHECK(log.plan_flush().segments.size() == 1);
  CHECK(log.plan_flush().segments.empty());
}
