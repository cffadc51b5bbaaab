#include <catch2/catch.hpp>

#include <limits>

#include "runtime/batch/record_batch_builder.hpp"
#include "runtime/storage/producer_state.hpp"

using namespace capstan;

namespace {

constexpr int32_t int32_max = std::numeric_limits<int32_t>::max();

producer_batch batch_of(int64_t id, int16_t epoch, int32_t sequence, int32_t records = 1,
                        timestamp_ms max_timestamp = 1000) {
  return producer_batch{id, epoch, sequence, records - 1, max_timestamp};
}

// The leader's path: check, and on a pass commit at `first`. Returns the check's result.
result<producer_check> append(producer_state& state, const producer_batch& b, offset first) {
  auto checked = state.check(b, producer_origin::client);
  if (checked && !checked->duplicate) state.commit(checked->append, first);
  return checked;
}

} // namespace

TEST_CASE("sequences advance by lastOffsetDelta and wrap from INT32_MAX to 0", "[producer_state]") {
  CHECK(increment_sequence(0, 0) == 0);
  CHECK(increment_sequence(5, 3) == 8);
  CHECK(increment_sequence(int32_max, 0) == int32_max);
  CHECK(increment_sequence(int32_max - 1, 1) == int32_max);
  CHECK(increment_sequence(int32_max, 1) == 0);
  CHECK(increment_sequence(int32_max - 1, 4) == 2);
}

TEST_CASE("a batch without producer id passes and leaves no producer state", "[producer_state]") {
  producer_state state;
  for (int i = 0; i < 3; ++i) {
    auto r = append(state, batch_of(no_producer_id, -1, -1, 2), offset{2 * i});
    REQUIRE(r);
    CHECK_FALSE(r->duplicate);
  }
  CHECK(state.producers().empty());
  CHECK(state.end_offset() == offset{6});
}

TEST_CASE("in-sequence batches are appended and remembered, the last 5 at most",
          "[producer_state]") {
  producer_state state;
  for (int i = 0; i < 7; ++i) REQUIRE(append(state, batch_of(7, 0, 2 * i, 2, 100 + i), offset{10 + 2 * i}));
  const auto* p = state.find(7);
  REQUIRE(p);
  CHECK(p->epoch == 0);
  REQUIRE(p->batches.size() == producer_batches_retained);
  CHECK(p->batches.front() == producer_batch_entry{4, 5, offset{14}, offset{15}, 102});
  CHECK(p->batches.back() == producer_batch_entry{12, 13, offset{22}, offset{23}, 106});
  CHECK(p->last_sequence() == 13);
  CHECK(state.end_offset() == offset{24});
}

TEST_CASE("a retried batch among the last 5 is answered with its original offsets",
          "[producer_state]") {
  producer_state state;
  for (int i = 0; i < 6; ++i) REQUIRE(append(state, batch_of(7, 0, 3 * i, 3, 50 + i), offset{100 + 3 * i}));
  const auto before = state;
  for (int i = 1; i < 6; ++i) {
    INFO(i);
    auto r = state.check(batch_of(7, 0, 3 * i, 3, 50 + i), producer_origin::client);
    REQUIRE(r);
    REQUIRE(r->duplicate);
    CHECK(r->duplicate->first_offset == offset{100 + 3 * i});
    CHECK(r->duplicate->last_offset == offset{102 + 3 * i});
    CHECK(r->duplicate->max_timestamp == 50 + i);
  }
  CHECK(state == before);

  SECTION("one older than the last 5 is out of order") {
    auto r = state.check(batch_of(7, 0, 0, 3), producer_origin::client);
    REQUIRE_FALSE(r);
    CHECK(r.code() == errc::out_of_order_sequence_number);
  }
  SECTION("a retry that only overlaps a retained batch is out of order") {
    auto r = state.check(batch_of(7, 0, 15, 2), producer_origin::client);
    REQUIRE_FALSE(r);
    CHECK(r.code() == errc::out_of_order_sequence_number);
  }
  SECTION("the same sequences under another epoch are not a duplicate") {
    auto r = state.check(batch_of(7, 1, 15, 3), producer_origin::client);
    REQUIRE_FALSE(r);
    CHECK(r.code() == errc::out_of_order_sequence_number);
  }
}

TEST_CASE("a sequence gap is OUT_OF_ORDER_SEQUENCE_NUMBER and changes nothing",
          "[producer_state]") {
  producer_state state;
  REQUIRE(append(state, batch_of(7, 0, 0, 4), offset{0}));
  const auto before = state;
  for (int32_t sequence : {5, 6, 100, 3, 1}) {
    INFO(sequence);
    auto r = append(state, batch_of(7, 0, sequence), offset{4});
    REQUIRE_FALSE(r);
    CHECK(r.code() == errc::out_of_order_sequence_number);
    CHECK(r.err().message.find("producer 7") != std::string::npos);
  }
  CHECK(state == before);
  CHECK(append(state, batch_of(7, 0, 4), offset{4}));
}

TEST_CASE("an older epoch is INVALID_PRODUCER_EPOCH", "[producer_state]") {
  producer_state state;
  REQUIRE(append(state, batch_of(7, 3, 0), offset{0}));
  for (int32_t sequence : {0, 1}) {
    auto r = state.check(batch_of(7, 2, sequence), producer_origin::client);
    REQUIRE_FALSE(r);
    CHECK(r.code() == errc::invalid_producer_epoch);
  }
}

TEST_CASE("a new epoch starts at sequence 0 and drops the old epoch's batches",
          "[producer_state]") {
  producer_state state;
  for (int i = 0; i < 3; ++i) REQUIRE(append(state, batch_of(7, 0, i), offset{i}));
  auto skipped = state.check(batch_of(7, 1, 3), producer_origin::client);
  REQUIRE_FALSE(skipped);
  CHECK(skipped.code() == errc::out_of_order_sequence_number);

  auto fresh = append(state, batch_of(7, 1, 0), offset{3});
  REQUIRE(fresh);
  CHECK_FALSE(fresh->duplicate);
  const auto* p = state.find(7);
  REQUIRE(p);
  CHECK(p->epoch == 1);
  REQUIRE(p->batches.size() == 1);
  CHECK(p->batches[0].first_offset == offset{3});
  auto old = state.check(batch_of(7, 0, 3), producer_origin::client);
  REQUIRE_FALSE(old);
  CHECK(old.code() == errc::invalid_producer_epoch);
}

TEST_CASE("an unknown producer passes at any sequence, as Kafka since KIP-360",
          "[producer_state]") {
  producer_state state;
  auto r = append(state, batch_of(9, 4, 1234, 2), offset{0});
  REQUIRE(r);
  CHECK_FALSE(r->duplicate);
  REQUIRE(state.find(9));
  CHECK(state.find(9)->last_sequence() == 1235);
  CHECK(append(state, batch_of(9, 4, 1236), offset{2}));
}

TEST_CASE("a producer id with a negative sequence or epoch is INVALID_RECORD from a client",
          "[producer_state]") {
  producer_state state;
  for (auto b : {batch_of(7, 0, -1), batch_of(7, -1, 0)}) {
    auto r = state.check(b, producer_origin::client);
    REQUIRE_FALSE(r);
    CHECK(r.code() == errc::invalid_record);
    auto replicated = state.check(b, producer_origin::replication);
    REQUIRE(replicated);
    state.commit(replicated->append, offset{0});
  }
  CHECK(state.producers().empty());
}

TEST_CASE("sequences wrap from INT32_MAX to 0 within a batch and between batches",
          "[producer_state]") {
  producer_state state;
  REQUIRE(append(state, batch_of(7, 0, int32_max - 2, 3), offset{0}));
  CHECK(state.find(7)->last_sequence() == int32_max);
  REQUIRE(append(state, batch_of(7, 0, 0, 2), offset{3}));
  CHECK(state.find(7)->last_sequence() == 1);

  producer_state across;
  REQUIRE(append(across, batch_of(7, 0, int32_max - 1, 4), offset{0}));
  CHECK(across.find(7)->last_sequence() == 1);
  auto dup = across.check(batch_of(7, 0, int32_max - 1, 4), producer_origin::client);
  REQUIRE(dup);
  CHECK(dup->duplicate);
  auto gap = across.check(batch_of(7, 0, 0), producer_origin::client);
  REQUIRE_FALSE(gap);
  CHECK(gap.code() == errc::out_of_order_sequence_number);
  CHECK(append(across, batch_of(7, 0, 2), offset{4}));
}

TEST_CASE("a replicated batch is taken without the leader's checks", "[producer_state]") {
  producer_state state;
  REQUIRE(append(state, batch_of(7, 2, 0, 2), offset{0}));
  for (auto b : {batch_of(7, 2, 50), batch_of(7, 1, 60), batch_of(7, 1, 60)}) {
    auto r = state.check(b, producer_origin::replication);
    REQUIRE(r);
    CHECK_FALSE(r->duplicate);
    state.commit(r->append, state.end_offset());
  }
  const auto* p = state.find(7);
  REQUIRE(p);
  CHECK(p->epoch == 1);
  CHECK(p->batches.size() == 2);
  CHECK(state.end_offset() == offset{5});
}

TEST_CASE("a follower that replays the leader's batches deduplicates like the leader",
          "[producer_state]") {
  producer_state leader;
  std::vector<bytes> log;
  offset next{0};
  int32_t sequence[2] = {0, 0};
  for (int i = 0; i < 6; ++i) {
    const int32_t count = 1 + i % 3;
    const producer_batch b = batch_of(100 + i % 2, 0, sequence[i % 2], count, 500 + i);
    sequence[i % 2] += count;
    auto r = append(leader, b, next);
    REQUIRE(r);
    record_batch_builder builder(next, 500 + i);
    for (int k = 0; k < count; ++k) builder.add("k", "v", 500 + i);
    builder.producer(b.producer_id, b.epoch, b.base_sequence);
    log.push_back(builder.build());
    next = next + count;
  }
  producer_state follower;
  for (const auto& bytes : log) {
    auto view = record_batch_view::parse(bytes, 1 << 20);
    REQUIRE(view);
    follower.replay(*view);
  }
  CHECK(follower == leader);
  auto dup = follower.check(batch_of(101, 0, 3, 3, 505), producer_origin::client);
  REQUIRE(dup);
  REQUIRE(dup->duplicate);
  CHECK(dup->duplicate->first_offset == offset{9});
}

TEST_CASE("a failed append commits nothing: checking alone leaves the state as it was",
          "[producer_state]") {
  producer_state state;
  REQUIRE(append(state, batch_of(7, 0, 0), offset{0}));
  const auto before = state;
  auto r = state.check(batch_of(7, 0, 1), producer_origin::client);
  REQUIRE(r);
  CHECK(state == before);
  // The append failed, the producer retries the same batch: still in sequence, not a duplicate.
  auto retry = append(state, batch_of(7, 0, 1), offset{1});
  REQUIRE(retry);
  CHECK_FALSE(retry->duplicate);
}

TEST_CASE("truncation drops the batches past the new end and the producers left without any",
          "[producer_state]") {
  producer_state state;
  REQUIRE(append(state, batch_of(1, 0, 0, 2), offset{0}));  // 0-1
  REQUIRE(append(state, batch_of(2, 0, 0, 2), offset{2}));  // 2-3
  REQUIRE(append(state, batch_of(1, 0, 2, 2), offset{4}));  // 4-5
  REQUIRE(append(state, batch_of(2, 5, 0, 2), offset{6}));  // 6-7, a new epoch of 2
  state.truncate_to(offset{4});
  CHECK(state.end_offset() == offset{4});
  REQUIRE(state.find(1));
  CHECK(state.find(1)->batches.size() == 1);
  CHECK(state.find(1)->last_sequence() == 1);
  CHECK_FALSE(state.find(2));
  // Producer 1 continues after its last batch that survived.
  CHECK(append(state, batch_of(1, 0, 2, 2), offset{4}));
  // Producer 2 is unknown now and passes at any sequence.
  CHECK(append(state, batch_of(2, 5, 2), offset{6}));

  state.truncate_to(offset{100});
  CHECK(state.end_offset() == offset{7});
}

TEST_CASE("producers idle for producer.id.expiration.ms expire", "[producer_state]") {
  producer_state state;
  REQUIRE(append(state, batch_of(1, 0, 0, 1, 1'000), offset{0}));
  REQUIRE(append(state, batch_of(2, 0, 0, 1, 1'000), offset{1}));
  REQUIRE(append(state, batch_of(1, 0, 1, 1, 5'000), offset{2}));
  CHECK(state.expire(1'000 + default_producer_id_expiration_ms - 1) == 0);
  CHECK(state.expire(1'000 + default_producer_id_expiration_ms) == 1);
  CHECK(state.find(1));
  CHECK_FALSE(state.find(2));
  CHECK(state.expire(5'000 + 10, 10) == 1);
  CHECK(state.producers().empty());
}

TEST_CASE("replay_batches skips batches that end before the offset it starts from",
          "[producer_state]") {
  std::vector<bytes> log;
  for (int i = 0; i < 3; ++i) {
    record_batch_builder builder(offset{2 * i}, 10);
    builder.add("k", "a", 10).add("k", "b", 10).producer(7, 0, 2 * i);
    log.push_back(builder.build());
  }
  std::vector<record_batch_view> views;
  for (const auto& b : log) views.push_back(*record_batch_view::parse(b, 1 << 20));
  producer_state state;
  replay_batches(state, views, offset{2});
  REQUIRE(state.find(7));
  CHECK(state.find(7)->batches.size() == 2);
  CHECK(state.find(7)->batches.front().first_offset == offset{2});
  CHECK(state.end_offset() == offset{6});
}
