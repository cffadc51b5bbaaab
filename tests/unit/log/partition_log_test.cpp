#include <catch2/catch.hpp>

#include <filesystem>

#include <caf/all.hpp>

#include "actors/log/partition_log_actor.hpp"
#include "runtime/actor/caf_error.hpp"
#include "runtime/batch/record_batch_view.hpp"
#include "runtime/storage/offset_gaps.hpp"
#include "runtime/storage/partition_check.hpp"
#include "tests/support/log_harness.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace capstan::test;

namespace {

errc code_of(const caf::error& e) { return from_caf_error(e).code; }

size_t count_files(const std::filesystem::path& dir, const std::string& ext) {
  size_t n = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir)) n += f.path().extension() == ext;
  return n;
}

} // namespace

TEST_CASE("leader appends get consecutive offsets and read back whole", "[log]") {
  temp_dir dir;
  log_harness log(dir.path());
  log.open();
  auto a = log.append(make_batch(3, "a", log.now()));
  REQUIRE(a);
  CHECK(a->first == offset{0});
  CHECK(a->last == offset{2});
  CHECK(a->record_count == 3);
  auto b = log.append(make_batch(2, "b", log.now()));
  REQUIRE(b);
  CHECK(b->first == offset{3});
  CHECK(b->last == offset{4});

  auto records = log.read_all();
  REQUIRE(records.size() == 5);
  CHECK(records[0].value == "a-0");
  CHECK(records[4].value == "b-1");
  CHECK(records[4].off == offset{4});
  CHECK(log.info().log_end == offset{5});
}

TEST_CASE("a read from the middle of a batch returns that whole batch", "[log]") {
  temp_dir dir;
  log_harness log(dir.path());
  log.open();
  REQUIRE(log.append(make_batch(10, "a", log.now())));
  auto slice = log.read(offset{4});
  REQUIRE(slice);
  CHECK(slice->first_offset == offset{0});
  CHECK(slice->next_offset == offset{10});
  CHECK(records_of(slice->bytes()).size() == 10);
}

TEST_CASE("reads stop below the upper bound at a batch boundary", "[log]") {
  temp_dir dir;
  log_harness log(dir.path());
  log.open();
  for (int i = 0; i < 4; ++i) REQUIRE(log.append(make_batch(5, "x", log.now())));
  auto slice = log.read(offset{0}, 1 << 20, offset{10});
  REQUIRE(slice);
  CHECK(slice->next_offset == offset{10});
  auto records = records_of(slice->bytes());
  REQUIRE(records.size() == 10);
  CHECK(records.back().off == offset{9});
  auto at_bound = log.read(offset{10}, 1 << 20, offset{10});
  REQUIRE(at_bound);
  CHECK(at_bound->empty());
}

TEST_CASE("a read of the last append returns its records, aligned, until the log changes",
          "[log]") {
  temp_dir dir;
  log_harness log(dir.path());
  log.open();
  REQUIRE(log.append(make_batch(3, "a", log.now())));
  REQUIRE(log.append(make_batch(2, "b", log.now())));
  auto tail = log.read(offset{3});
  REQUIRE(tail);
  CHECK(reinterpret_cast<uintptr_t>(tail->data) % 8 == 0);
  CHECK(tail->first_offset == offset{3});
  CHECK(tail->next_offset == offset{5});
  auto records = records_of(tail->bytes());
  REQUIRE(records.size() == 2);
  CHECK(records[0].value == "b-0");
  CHECK(records[1].off == offset{4});

  // Above the upper bound (a high watermark below the append): nothing.
  auto bounded = log.read(offset{3}, 1 << 20, offset{4});
  REQUIRE(bounded);
  CHECK(bounded->empty());

  // Truncated and appended again at the same offsets: the new records, not the old ones.
  REQUIRE(log.truncate(offset{3}));
  auto gone = log.read(offset{3});
  REQUIRE(gone);
  CHECK(gone->empty());
  REQUIRE(log.append(make_batch(2, "c", log.now())));
  auto again = log.read(offset{3});
  REQUIRE(again);
  auto replaced = records_of(again->bytes());
  REQUIRE(replaced.size() == 2);
  CHECK(replaced[0].value == "c-0");
  CHECK(log.read_all().size() == 5);
}

TEST_CASE("a read of the last replicated append returns the leader's batch", "[log]") {
  temp_dir dir;
  log_harness log(dir.path());
  log.open();
  for (int i = 0; i < 3; ++i) {
    auto batch = make_batch(1 + i, "r" + std::to_string(i), log.now());
    const offset base{i * (i + 1) / 2};
    set_base_offset(batch, base);
    REQUIRE(log.append(batch, append_origin::replication));
    auto slice = log.read(base);
    REQUIRE(slice);
    CHECK(reinterpret_cast<uintptr_t>(slice->data) % 8 == 0);
    auto records = records_of(slice->bytes());
    REQUIRE(records.size() == static_cast<size_t>(1 + i));
    CHECK(records.front().off == base);
    CHECK(records.front().value == "r" + std::to_string(i) + "-0");
  }
}

TEST_CASE("reads outside the log are OFFSET_OUT_OF_RANGE and at the end are empty", "[log]") {
  temp_dir dir;
  log_harness log(dir.path());
  log.open();
  REQUIRE(log.append(make_batch(2, "a", log.now())));
  auto past = log.read(offset{3});
  REQUIRE_FALSE(past);
  CHECK(code_of(past.error()) == errc::offset_out_of_range);
  auto negative = log.read(offset{-1});
  REQUIRE_FALSE(negative);
  CHECK(code_of(negative.error()) == errc::offset_out_of_range);
  auto end = log.read(offset{2});
  REQUIRE(end);
  CHECK(end->empty());
}

TEST_CASE("bad batches are refused with a named error and change nothing", "[log]") {
  temp_dir dir;
  log_config config;
  config.max_message_bytes = 4096;
  log_harness log(dir.path(), config);
  log.open();
  REQUIRE(log.append(make_batch(1, "ok", log.now())));

  auto corrupt = make_batch(3, "c", log.now());
  corrupt[corrupt.size() - 2] ^= 0x5a;
  auto r1 = log.append(corrupt);
  REQUIRE_FALSE(r1);
  CHECK(code_of(r1.error()) == errc::corrupt_message);

  auto big = log.append(make_batch(1, "big", log.now(), 0, 8000));
  REQUIRE_FALSE(big);
  CHECK(code_of(big.error()) == errc::message_too_large);

  auto garbage = log.append(bytes(100, 0xab));
  REQUIRE_FALSE(garbage);

  auto empty = log.append(bytes{});
  REQUIRE_FALSE(empty);
  CHECK(code_of(empty.error()) == errc::corrupt_message);

  CHECK(log.info().log_end == offset{1});
  CHECK(log.read_all().size() == 1);
}

TEST_CASE("replicated batches keep their offsets and must follow the log end", "[log]") {
  temp_dir dir;
  log_harness log(dir.path());
  log.open();
  auto batch = make_batch(4, "r", log.now());
  set_base_offset(batch, offset{0});
  REQUIRE(log.append(batch, append_origin::replication));
  auto again = log.append(batch, append_origin::replication);
  REQUIRE_FALSE(again);
  CHECK(code_of(again.error()) == errc::offset_out_of_range);

  auto later = make_batch(2, "s", log.now());
  set_base_offset(later, offset{4});
  auto r = log.append(later, append_origin::replication);
  REQUIRE(r);
  CHECK(r->first == offset{4});
  CHECK(r->last == offset{5});
  CHECK(log.info().log_end == offset{6});
}

TEST_CASE("segments roll on segment.bytes and on segment.ms", "[log]") {
  temp_dir dir;
  log_config config;
  config.segment_bytes = 1000;
  config.segment_ms = 60000;
  log_harness log(dir.path(), config);
  log.open();
  for (int i = 0; i < 10; ++i) REQUIRE(log.append(make_batch(5, "v", log.now(), 0, 50)));
  auto rolled_by_size = log.info().segment_count;
  CHECK(rolled_by_size > 3);

  log.advance_clock(61000);
  REQUIRE(log.append(make_batch(1, "late", log.now())));
  CHECK(log.info().segment_count == rolled_by_size + 1);
  CHECK(count_files(dir.path(), ".log") == static_cast<size_t>(rolled_by_size + 1));
  CHECK(log.read_all().size() == 51);
}

TEST_CASE("truncation drops every batch at or after the offset, whole batches as Kafka",
          "[log]") {
  temp_dir dir;
  log_config config;
  config.segment_bytes = 1500;
  log_harness log(dir.path(), config);
  log.open();
  for (int i = 0; i < 12; ++i) REQUIRE(log.append(make_batch(5, "t", log.now(), 0, 40)));
  REQUIRE(log.info().segment_count > 2);

  auto end = log.truncate(offset{23}); // inside the batch 20..24
  REQUIRE(end);
  CHECK(*end == offset{20});
  CHECK(log.info().log_end == offset{20});
  auto records = log.read_all();
  REQUIRE(records.size() == 20);
  CHECK(records.back().off == offset{19});

  auto next = log.append(make_batch(2, "after", log.now()));
  REQUIRE(next);
  CHECK(next->first == offset{20});
  CHECK(log.read_all().back().value == "after-1");

  auto to_zero = log.truncate(offset{0});
  REQUIRE(to_zero);
  CHECK(*to_zero == offset{0});
  CHECK(log.info().segment_count == 1);
  CHECK(log.read_all().empty());
  REQUIRE(log.append(make_batch(1, "fresh", log.now())));
  CHECK(log.read_all().front().value == "fresh-0");
}

TEST_CASE("retention.bytes deletes the oldest whole segments but never the active one", "[log]") {
  temp_dir dir;
  log_config config;
  config.segment_bytes = 1200;
  config.retention_bytes = 2500;
  config.retention_ms = -1;
  log_harness log(dir.path(), config);
  log.open();
  for (int i = 0; i < 20; ++i) REQUIRE(log.append(make_batch(5, "r", log.now(), 0, 30)));
  auto before = log.info();
  auto deleted = log.retain();
  REQUIRE(deleted);
  CHECK(*deleted > 0);
  auto after = log.info();
  CHECK(after.segment_count == before.segment_count - *deleted);
  CHECK(after.size_bytes >= 2500 - 1200);
  CHECK(after.log_start > offset{0});
  CHECK(after.log_end == before.log_end);
  auto records = log.read_all(after.log_start);
  CHECK(records.front().off == after.log_start);
  CHECK(records.back().off == after.log_end - 1);
  auto gone = log.read(offset{0});
  REQUIRE_FALSE(gone);
  CHECK(code_of(gone.error()) == errc::offset_out_of_range);
}

TEST_CASE("retention.ms deletes segments whose newest record is too old", "[log]") {
  temp_dir dir;
  log_config config;
  config.segment_bytes = 1000;
  config.segment_ms = 3600000; // the first append after the clock jump starts a new segment
  config.retention_ms = 3600000;
  log_harness log(dir.path(), config);
  log.open();
  for (int i = 0; i < 6; ++i) REQUIRE(log.append(make_batch(5, "old", log.now(), 0, 30)));
  log.advance_clock(7200000);
  for (int i = 0; i < 6; ++i) REQUIRE(log.append(make_batch(5, "new", log.now(), 0, 30)));
  REQUIRE(log.retain());
  auto records = log.read_all(log.info().log_start);
  REQUIRE_FALSE(records.empty());
  for (const auto& r : records) CHECK(r.timestamp == log.now());
  CHECK(records.size() == 30);
  log.advance_clock(7200000);
  REQUIRE(log.retain());
  CHECK(log.info().segment_count == 1);
}

TEST_CASE("offset for timestamp finds the first record at or after it", "[log]") {
  temp_dir dir;
  log_config config;
  config.segment_bytes = 800;
  log_harness log(dir.path(), config);
  log.open();
  const auto t0 = log.now();
  for (int i = 0; i < 10; ++i) {
    REQUIRE(log.append(make_batch(3, "ts", log.now(), 0, 30)));
    log.advance_clock(1000);
  }
  CHECK(*log.offset_for_time(t0) == 0);
  CHECK(*log.offset_for_time(t0 + 1) == 3);
  CHECK(*log.offset_for_time(t0 + 5000) == 15);
  CHECK(*log.offset_for_time(t0 + 9000) == 27);
  CHECK(*log.offset_for_time(t0 + 9001) == -1);
}

TEST_CASE("close and reopen keeps every record and the log end", "[log]") {
  temp_dir dir;
  log_config config;
  config.segment_bytes = 1000;
  log_harness log(dir.path(), config);
  log.open();
  for (int i = 0; i < 8; ++i) REQUIRE(log.append(make_batch(4, "c", log.now(), 0, 20)));
  auto before = log.read_all();
  auto rp = log.close();
  CHECK(rp == offset{32});
  log.open(rp);
  CHECK(log.info().log_end == offset{32});
  CHECK(log.read_all() == before);
  REQUIRE(log.append(make_batch(1, "more", log.now())));
  CHECK(log.info().log_end == offset{33});
}

TEST_CASE("flush.messages advances the recovery point", "[log]") {
  temp_dir dir;
  log_config config;
  config.flush_messages = 5;
  log_harness log(dir.path(), config);
  log.open();
  REQUIRE(log.append(make_batch(3, "f", log.now())));
  CHECK(log.info().recovery_point == offset{0});
  REQUIRE(log.append(make_batch(3, "f", log.now())));
  CHECK(log.info().recovery_point == offset{6});
  auto flushed = log.flush();
  REQUIRE(flushed);
  CHECK(*flushed == offset{6});
}

TEST_CASE("a corrupt tail found at open is cut and the log continues after it", "[log]") {
  temp_dir dir;
  log_harness log(dir.path());
  log.open();
  for (int i = 0; i < 5; ++i) REQUIRE(log.append(make_batch(2, "p", log.now())));
  log.crash();
  auto file = dir.path() / "00000000000000000000.log";
  auto size = std::filesystem::file_size(file);
  std::filesystem::resize_file(file, size - 3);
  log.open();
  CHECK(log.info().log_end == offset{8});
  CHECK(log.read_all().size() == 8);
  auto next = log.append(make_batch(1, "q", log.now()));
  REQUIRE(next);
  CHECK(next->first == offset{8});
}

TEST_CASE("compaction keeps the latest record per key without changing offsets", "[log]") {
  temp_dir dir;
  log_config config;
  config.segment_bytes = 1500;
  config.cleanup = cleanup_policy::compact;
  config.delete_retention_ms = 1000;
  log_harness log(dir.path(), config);
  log.open();
  for (int round = 0; round < 6; ++round)
    REQUIRE(log.append(make_batch(10, "round" + std::to_string(round), log.now(), 5, 20)));
  // A tombstone for k0, then enough data to seal it into a segment.
  REQUIRE(log.append(make_batch({{std::string("k0"), std::nullopt, log.now()}})));
  for (int i = 0; i < 4; ++i) {
    std::vector<test_record> fill;
    for (int j = 0; j < 5; ++j)
      fill.push_back({"f" + std::to_string(i) + "-" + std::to_string(j), std::string(200, 'x'), log.now()});
    REQUIRE(log.append(make_batch(fill)));
  }
  const auto before = log.read_all();
  auto end_before = log.info().log_end;

  auto stats = log.compact();
  REQUIRE(stats);
  CHECK(stats->segments_cleaned > 0);
  CHECK(stats->records_removed > 0);
  auto after = log.read_all();
  CHECK(log.info().log_end == end_before);
  CHECK(after.size() < before.size());

  // For every key the surviving record is the latest one before compaction, at the same offset.
  std::map<std::string, read_record> latest;
  for (const auto& r : before) latest[*r.key] = r;
  std::map<std::string, read_record> survivors;
  for (const auto& r : after) {
    CHECK_FALSE(survivors.count(*r.key));
    survivors[*r.key] = r;
  }
  for (const auto& [key, r] : latest) {
    REQUIRE(survivors.count(key));
    CHECK(survivors[key] == r);
  }

  // Once the tombstone is older than delete.retention.ms, it goes too.
  log.advance_clock(5000);
  REQUIRE(log.append(make_batch({{std::string("late"), std::string("x"), log.now()}})));
  REQUIRE(log.compact());
  bool tombstone_left = false;
  for (const auto& r : log.read_all())
    if (r.key == "k0") tombstone_left = true;
  CHECK_FALSE(tombstone_left);
}

TEST_CASE("compaction records the offsets it empties at segment ends, so start-up sees no hole",
          "[log]") {
  temp_dir dir;
  log_config config;
  config.segment_bytes = 1500;
  config.cleanup = cleanup_policy::compact;
  log_harness log(dir.path(), config);
  log.open();
  // Every batch repeats the same keys, and a segment holds two: compaction empties every sealed
  // segment but the last one.
  for (int round = 0; round < 8; ++round)
    REQUIRE(log.append(make_batch(10, "round" + std::to_string(round), log.now(), 5, 60)));
  REQUIRE(log.info().segment_count >= 3);
  REQUIRE(log.compact());
  const auto end = log.info().log_end;
  const auto point = log.close();

  auto gaps = read_offset_gaps(dir.path());
  REQUIRE(gaps);
  CHECK_FALSE(gaps->empty());
  auto checked = prepare_partition_dir(dir.path(), "test-0", uuid_bytes{}, {point, end}, {});
  INFO((checked ? std::string() : checked.err().message));
  CHECK(checked);
  // Without the record, the emptied ends would look like lost segments.
  std::filesystem::remove(dir.path() / offset_gaps_file);
  auto without = prepare_partition_dir(dir.path(), "test-0", uuid_bytes{}, {point, end}, {});
  REQUIRE_FALSE(without);
  CHECK(without.err().message.find("missing") != std::string::npos);
}

TEST_CASE("a compacted topic refuses records without a key", "[log]") {
  for (auto policy : {cleanup_policy::compact, cleanup_policy::compact_delete}) {
    temp_dir dir;
    log_config config;
    config.cleanup = policy;
    log_harness log(dir.path(), config);
    log.open();
    auto r = log.append(make_batch(2, "nokey", log.now()));
    REQUIRE_FALSE(r);
    CHECK(code_of(r.error()) == errc::invalid_record);
  }
}

TEST_CASE("cleanup.policy compact,delete both compacts and deletes by retention", "[log]") {
  temp_dir dir;
  log_config config;
  config.segment_bytes = 1500;
  config.cleanup = cleanup_policy::compact_delete;
  config.retention_ms = -1;
  config.retention_bytes = 0;
  log_harness log(dir.path(), config);
  log.open();
  for (int round = 0; round < 8; ++round)
    REQUIRE(log.append(make_batch(10, "round" + std::to_string(round), log.now(), 5, 60)));
  REQUIRE(log.info().segment_count >= 3);
  auto stats = log.compact();
  REQUIRE(stats);
  CHECK(stats->records_removed > 0);
  const auto end = log.info().log_end;
  auto deleted = log.retain();
  REQUIRE(deleted);
  CHECK(*deleted > 0);
  CHECK(log.info().log_start > offset{0});
  CHECK(log.info().log_end == end);
}
