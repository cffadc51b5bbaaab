// Rebuilding a partition's producer state on open (runtime/storage/producer_state_loader.hpp):
// which snapshot is used, what a damaged one costs, and which snapshots the pruning keeps.

#include <catch2/catch.hpp>

#include <fstream>

#include "runtime/batch/record_batch_builder.hpp"
#include "runtime/storage/producer_snapshot.hpp"
#include "runtime/storage/producer_state_loader.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using capstan::test::temp_dir;

namespace {

// Two segments, at 0 and 4, of two-record batches from producer 7 (sequences 0, 2, 4, 6), with
// the state a leader built while appending them.
struct stored_log {
  std::vector<std::shared_ptr<segment>> segments;
  producer_state leader;
};

stored_log write_log(const std::filesystem::path& dir) {
  stored_log log;
  for (int64_t base : {0, 4}) {
    auto seg = segment::open(dir, offset{base}, segment_open_mode::create, {});
    REQUIRE(seg);
    for (int64_t at = base; at < base + 4; at += 2) {
      record_batch_builder builder(offset{at}, 1000 + at);
      builder.add("k", "a", 1000 + at).add("k", "b", 1000 + at);
      builder.producer(7, 0, static_cast<int32_t>(at));
      const auto batch = builder.build();
      REQUIRE((*seg)->append(batch));
      auto view = record_batch_view::parse(batch, batch.size());
      REQUIRE(view);
      log.leader.replay(*view);
    }
    log.segments.push_back(std::move(*seg));
  }
  return log;
}

// The leader's state as of `end`: what a snapshot at `end` holds.
producer_state state_below(const stored_log& log, offset end) {
  auto state = log.leader;
  state.truncate_to(end);
  state.set_end_offset(end);
  return state;
}

std::vector<offset> snapshots(const std::filesystem::path& dir) {
  auto ends = list_producer_snapshots(dir);
  REQUIRE(ends);
  return *ends;
}

void damage(const std::filesystem::path& file) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(12);
  f.put('\x5a');
}

} // namespace

TEST_CASE("without a snapshot the producer state is rebuilt from the whole log",
          "[producer_state][loader]") {
  temp_dir dir;
  auto log = write_log(dir.path());
  auto loaded = load_producer_state(dir.path(), log.segments, "t-0");
  REQUIRE(loaded);
  CHECK(*loaded == log.leader);
}

TEST_CASE("a damaged newest snapshot is removed and the older one used, with the log after it",
          "[producer_state][loader]") {
  temp_dir dir;
  auto log = write_log(dir.path());
  // The older snapshot at 4 says producer 7 is unknown: only a load from it (and the batches
  // from 4) can tell, since a rebuild from the log start would know its first batches.
  producer_state older;
  older.set_end_offset(offset{4});
  REQUIRE(write_producer_snapshot(dir.path(), older));
  REQUIRE(write_producer_snapshot(dir.path(), state_below(log, offset{6})));
  damage(dir / producer_snapshot_name(offset{6}));

  auto loaded = load_producer_state(dir.path(), log.segments, "t-0");
  REQUIRE(loaded);
  CHECK(snapshots(dir.path()) == std::vector<offset>{offset{4}});
  const auto* entry = loaded->find(7);
  REQUIRE(entry);
  REQUIRE(entry->batches.size() == 2);
  CHECK(entry->batches.front().first_offset == offset{4});
  CHECK(loaded->end_offset() == offset{8});
}

TEST_CASE("snapshots above the log end are removed before loading", "[producer_state][loader]") {
  temp_dir dir;
  auto log = write_log(dir.path());
  REQUIRE(write_producer_snapshot(dir.path(), state_below(log, offset{4})));
  producer_state beyond;
  beyond.set_end_offset(offset{10});
  REQUIRE(write_producer_snapshot(dir.path(), beyond));

  auto loaded = load_producer_state(dir.path(), log.segments, "t-0");
  REQUIRE(loaded);
  CHECK(snapshots(dir.path()) == std::vector<offset>{offset{4}});
  CHECK(*loaded == log.leader);
}

TEST_CASE("pruning keeps snapshots at or below a truncation point and the newest below the log "
          "start", "[producer_state][loader]") {
  temp_dir dir;
  for (int64_t end : {2, 4, 6, 8}) {
    producer_state s;
    s.set_end_offset(offset{end});
    REQUIRE(write_producer_snapshot(dir.path(), s));
  }
  REQUIRE(delete_producer_snapshots_after(dir.path(), offset{6}));
  CHECK(snapshots(dir.path()) == std::vector<offset>{offset{2}, offset{4}, offset{6}});
  REQUIRE(delete_producer_snapshots_before(dir.path(), offset{5}));
  CHECK(snapshots(dir.path()) == std::vector<offset>{offset{6}});
  REQUIRE(delete_producer_snapshots_before(dir.path(), offset{100}));
  CHECK(snapshots(dir.path()) == std::vector<offset>{offset{6}});
  REQUIRE(delete_all_producer_snapshots(dir.path()));
  CHECK(snapshots(dir.path()).empty());
}
