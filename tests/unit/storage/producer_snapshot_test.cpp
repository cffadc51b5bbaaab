#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>

#include "runtime/batch/record_batch_builder.hpp"
#include "runtime/storage/producer_snapshot.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;

namespace {

// A log of `count` batches from three producers (one of them bumping its epoch, one without
// idempotence), with the state a leader builds while appending them.
struct producer_log {
  std::vector<bytes> batches;
  producer_state leader;
};

producer_log make_log(int count) {
  producer_log log;
  offset next{0};
  int32_t sequence[3] = {0, 0, 0};
  bool bumped = false;
  for (int i = 0; i < count; ++i) {
    const int p = i % 4 == 3 ? -1 : i % 3;
    const int64_t id = p < 0 ? no_producer_id : 40 + p;
    if (p == 2 && i >= 8 && !bumped) {
      bumped = true;
      sequence[2] = 0;
    }
    const int16_t epoch = p < 0 ? -1 : (p == 2 && bumped ? 1 : 0);
    const int32_t records = 1 + i % 3;
    const int32_t base_sequence = p < 0 ? -1 : sequence[p];
    record_batch_builder builder(next, 1000 + i);
    for (int k = 0; k < records; ++k) builder.add("k", "v" + std::to_string(i), 1000 + i);
    builder.producer(id, epoch, base_sequence);
    log.batches.push_back(builder.build());
    auto checked = log.leader.check(
        producer_batch{id, epoch, base_sequence, records - 1, 1000 + i}, producer_origin::client);
    REQUIRE(checked);
    REQUIRE_FALSE(checked->duplicate);
    log.leader.commit(checked->append, next);
    if (p >= 0) sequence[p] = increment_sequence(base_sequence, records);
    next = next + records;
  }
  return log;
}

std::vector<record_batch_view> views_of(const std::vector<bytes>& batches) {
  std::vector<record_batch_view> out;
  for (const auto& b : batches) {
    auto view = record_batch_view::parse(b, 1 << 20);
    REQUIRE(view);
    out.push_back(*view);
  }
  return out;
}

} // namespace

TEST_CASE("a snapshot file name is the end offset in 20 digits", "[producer_state]") {
  CHECK(producer_snapshot_name(offset{42}) == "00000000000000000042.snapshot");
  CHECK(parse_producer_snapshot_name("00000000000000000042.snapshot") == offset{42});
  for (std::string_view name : {"42.snapshot", "00000000000000000042.log",
                                "0000000000000000004x.snapshot", "99999999999999999999.snapshot",
                                "00000000000000000042.snapshot.tmp"})
    CHECK_FALSE(parse_producer_snapshot_name(name));
}

TEST_CASE("a producer snapshot round trips through its file", "[producer_state]") {
  auto log = make_log(30);
  REQUIRE(log.leader.producers().size() == 3);
  test::temp_dir dir{"producer-snapshot"};
  REQUIRE(write_producer_snapshot(dir.path(), log.leader));
  auto listed = list_producer_snapshots(dir.path());
  REQUIRE(listed);
  CHECK(*listed == std::vector<offset>{log.leader.end_offset()});
  auto back = read_producer_snapshot(dir / producer_snapshot_name(log.leader.end_offset()));
  REQUIRE(back);
  CHECK(*back == log.leader);
  CHECK(back->find(42)->epoch == 1);

  producer_state empty;
  empty.set_end_offset(offset{7});
  REQUIRE(write_producer_snapshot(dir.path(), empty));
  auto empty_back = read_producer_snapshot(dir / producer_snapshot_name(offset{7}));
  REQUIRE(empty_back);
  CHECK(*empty_back == empty);
  CHECK(*list_producer_snapshots(dir.path()) == std::vector<offset>{offset{7}, log.leader.end_offset()});
}

TEST_CASE("a truncated or damaged producer snapshot is CORRUPT_MESSAGE", "[producer_state]") {
  auto log = make_log(12);
  const bytes good = encode_producer_snapshot(log.leader);
  const offset end = log.leader.end_offset();
  REQUIRE(decode_producer_snapshot(good, end));

  for (size_t cut = 0; cut < good.size(); ++cut) {
    INFO("cut at " << cut);
    auto r = decode_producer_snapshot(bytes_view(good).first(cut), end);
    REQUIRE_FALSE(r);
    CHECK(r.code() == errc::corrupt_message);
  }
  for (size_t at = 0; at < good.size(); ++at) {
    INFO("flipped byte " << at);
    bytes bad = good;
    bad[at] ^= 0x10;
    auto r = decode_producer_snapshot(bad, end);
    REQUIRE_FALSE(r);
    CHECK(r.code() == errc::corrupt_message);
  }
  bytes longer = good;
  longer.push_back(0);
  CHECK(decode_producer_snapshot(longer, end).code() == errc::corrupt_message);
  // Batches at or past the end offset in the name cannot be from this snapshot.
  const offset last_of_40 = log.leader.find(40)->batches.back().last_offset;
  CHECK(decode_producer_snapshot(good, last_of_40).code() == errc::corrupt_message);

  test::temp_dir dir{"producer-snapshot-bad"};
  const auto file = dir / producer_snapshot_name(end);
  {
    std::ofstream out(file, std::ios::binary);
    out.write(reinterpret_cast<const char*>(good.data()), static_cast<std::streamsize>(good.size() / 2));
  }
  auto r = read_producer_snapshot(file);
  REQUIRE_FALSE(r);
  CHECK(r.code() == errc::corrupt_message);
  CHECK(r.err().message.find(file.string()) != std::string::npos);
}

TEST_CASE("rebuilding from the log equals the state the leader built while appending",
          "[producer_state]") {
  auto log = make_log(40);
  auto views = views_of(log.batches);

  producer_state from_scratch;
  replay_batches(from_scratch, views, offset{0});
  CHECK(from_scratch == log.leader);

  // From a snapshot taken part way, replaying only what follows it.
  producer_log first_half = make_log(20);
  const offset snapshot_end = first_half.leader.end_offset();
  auto snapshot = decode_producer_snapshot(encode_producer_snapshot(first_half.leader), snapshot_end);
  REQUIRE(snapshot);
  producer_state resumed = *snapshot;
  replay_batches(resumed, views, snapshot_end);
  CHECK(resumed == log.leader);

  // And the rebuilt state answers a retry of a recent batch as the leader would.
  auto last_idempotent = std::find_if(views.rbegin(), views.rend(),
                                      [](const auto& v) { return v.producer_id() != no_producer_id; });
  REQUIRE(last_idempotent != views.rend());
  const auto& last = *last_idempotent;
  auto retry = resumed.check(producer_batch::of(last), producer_origin::client);
  REQUIRE(retry);
  REQUIRE(retry->duplicate);
  CHECK(retry->duplicate->first_offset == last.base_offset());
}
