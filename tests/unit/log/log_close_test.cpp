// A clean close makes durable what is not yet, and nothing else: a node stopping with thousands
// of idle replicas closes each without a write or an fsync (tests/bench/README.md, "scale.sh").
// The open after it syncs nothing that every open redoes.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <utility>

#include <caf/all.hpp>

#include "actors/log/partition_log_actor.hpp"
#include "runtime/storage/fault_injection_env.hpp"
#include "runtime/storage/leader_epoch_checkpoint.hpp"
#include "runtime/storage/partition_metadata.hpp"
#include "runtime/storage/producer_snapshot.hpp"
#include "tests/support/caf_fixture.hpp"
#include "tests/support/log_builder.hpp"
#include "tests/support/sync_recorder.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

constexpr caf::timespan timeout = 10s;
constexpr timestamp_ms now = 1'700'000'000'000;

partition_log_options options_for(const temp_dir& dir, offset recovery_point) {
  partition_log_options opts;
  opts.dir = dir.path();
  opts.log_name = "idle-0";
  opts.clock = [] { return now; };
  opts.schedule_background_work = false;
  opts.recovery_point = recovery_point;
  return opts;
}

// Opens the log, runs `work`, then closes it with every write, fsync and rename in its
// directory failing: how many of those the close attempted, and the recovery point it answered.
template <class Work>
std::pair<size_t, offset> close_counting_writes(const temp_dir& dir, offset recovery_point,
                                                Work work) {
  fault_injection_env faults;
  scoped_storage_env installed(faults);
  threaded_system sys;
  auto log = open_partition_log(sys.sys(), options_for(dir, recovery_point));
  REQUIRE(log);
  sys.track(*log);
  work(sys, *log);
  const auto where = dir.path().string();
  faults.fail(where, storage_op::write, EIO);
  faults.fail(where, storage_op::sync, EIO);
  faults.fail(where, storage_op::rename, EIO);
  auto closed = sys.request<offset>(*log, timeout, close_atom_v);
  REQUIRE(closed);
  return {faults.injected(), *closed};
}

// Options for a log over <data>/new-0 as prepare_partition_dir leaves a new directory: its
// partition.metadata written, nothing fsynced.
partition_log_options new_directory_options(const temp_dir& data) {
  auto opts = options_for(data, offset{0});
  opts.dir = data / "new-0";
  opts.dir_unsynced = true;
  std::filesystem::create_directories(opts.dir);
  REQUIRE(write_partition_metadata(opts.dir, uuid_bytes{7}, sync_mode::unsynced));
  return opts;
}

// A batch of `count` records appended as leader at `epoch`.
auto append_led(threaded_system& sys, const partition_log_actor& log, int count, int epoch) {
  return sys.request<append_result>(log, timeout, append_atom_v,
                                    append_request{to_buffer(make_batch(count, "e", now)),
                                                   append_origin::leader, leader_epoch{epoch}});
}

// Opens a log in `dir`, appends a batch of `count` records as leader at `epoch` for each pair,
// and closes it (which flushes).
void write_closed_log(const temp_dir& dir, std::initializer_list<std::pair<int, int>> batches) {
  threaded_system sys;
  auto log = open_partition_log(sys.sys(), options_for(dir, offset{0}));
  REQUIRE(log);
  sys.track(*log);
  for (auto [count, epoch] : batches) REQUIRE(append_led(sys, *log, count, epoch));
  REQUIRE(sys.request<offset>(*log, timeout, close_atom_v));
}

bool has_snapshot(const temp_dir& dir) {
  auto snapshots = list_producer_snapshots(dir.path());
  return snapshots && !snapshots->empty();
}

} // namespace

TEST_CASE("closing a log that never held data writes and syncs nothing", "[log][close]") {
  temp_dir dir;
  auto [attempted, point] = close_counting_writes(dir, offset{0}, [](auto&, auto&) {});
  CHECK(attempted == 0);
  CHECK(point == offset{0});
  CHECK_FALSE(has_snapshot(dir));
}

TEST_CASE("a log closed again with nothing appended since writes and syncs nothing",
          "[log][close]") {
  temp_dir dir;
  offset first_close{0};
  {
    threaded_system sys;
    auto log = open_partition_log(sys.sys(), options_for(dir, offset{0}));
    REQUIRE(log);
    sys.track(*log);
    REQUIRE(sys.request<append_result>(*log, timeout, append_atom_v,
                                       append_request{to_buffer(make_batch(5, "kept", now)),
                                                      append_origin::leader, leader_epoch{0}}));
    auto closed = sys.request<offset>(*log, timeout, close_atom_v);
    REQUIRE(closed);
    first_close = *closed;
  }
  REQUIRE(first_close == offset{5});
  REQUIRE(has_snapshot(dir));

  auto [attempted, point] = close_counting_writes(dir, first_close, [](auto&, auto&) {});
  CHECK(attempted == 0);
  CHECK(point == offset{5});
}

TEST_CASE("a close still flushes what was appended since the last flush", "[log][close]") {
  temp_dir dir;
  auto [attempted, point] = close_counting_writes(dir, offset{0}, [](auto& sys, auto& log) {
    REQUIRE(sys.template request<append_result>(log, timeout, append_atom_v,
                                                append_request{to_buffer(make_batch(3, "new", now)),
                                                               append_origin::leader,
                                                               leader_epoch{0}}));
  });
  // The flush failed (EIO on fsync): the log is offline and its recovery point stays.
  CHECK(attempted > 0);
  CHECK(point == offset{0});
}

TEST_CASE("opening a log cuts the epochs at its end from the checkpoint without an fsync",
          "[log][close]") {
  temp_dir dir;
  write_closed_log(dir, {});
  // As a node leaves it that led the partition at its stop: the leader's epoch began at the log
  // end, so it describes no record and every open cuts it.
  const auto file = dir / leader_epoch_checkpoint_name;
  REQUIRE(write_leader_epoch_checkpoint(file, {{leader_epoch{7}, offset{0}}}));

  fault_injection_env faults;
  scoped_storage_env installed(faults);
  faults.fail(dir.path().string(), storage_op::sync, EIO);
  auto loaded = load_partition_log(options_for(dir, offset{0}));
  INFO((loaded ? std::string() : loaded.err().to_string()));
  REQUIRE(loaded);
  CHECK(loaded->epochs.entries().empty());
  CHECK(faults.injected() == 0);
  auto stored = read_leader_epoch_checkpoint(file);
  REQUIRE(stored);
  CHECK(stored->empty());
}

TEST_CASE("a new leader epoch is written by the flush that passes it, synced", "[log][close]") {
  temp_dir dir;
  fault_injection_env faults;
  scoped_storage_env installed(faults);
  threaded_system sys;
  auto log = open_partition_log(sys.sys(), options_for(dir, offset{0}));
  REQUIRE(log);
  sys.track(*log);
  // Every fsync of the checkpoint fails: a leadership taken at the log end still goes through,
  // and writes nothing yet.
  faults.fail(std::string(leader_epoch_checkpoint_name), storage_op::sync, EIO);
  auto end = sys.request<offset>(*log, timeout, newepoch_atom_v, leader_epoch{3});
  INFO((end ? std::string() : caf::to_string(end.error())));
  REQUIRE(end);
  CHECK(*end == offset{0});
  CHECK(faults.injected() == 0);
  auto stored = read_leader_epoch_checkpoint(dir / leader_epoch_checkpoint_name);
  REQUIRE(stored);
  CHECK(stored->empty());

  REQUIRE(append_led(sys, *log, 2, 3));
  // The flush that would move the recovery point past the epoch's start syncs it first, and
  // fails with it: the log goes offline rather than leave the epoch unsynced below the point.
  auto flushed = sys.request<offset>(*log, timeout, flush_atom_v);
  CHECK(faults.injected() > 0);
  CHECK((!flushed || *flushed == offset{0}));
  CHECK_FALSE(append_led(sys, *log, 1, 3));
}

TEST_CASE("an open takes the epochs above the recovery point from the batches, not from a "
          "checkpoint a lost write left behind",
          "[log][close]") {
  temp_dir dir;
  write_closed_log(dir, {{5, 2}, {3, 4}, {2, 4}});
  // As a power loss can leave it: the recovery point on disk still 5 (the batches above it were
  // written back but never flushed) and a checkpoint from before a cut, with an epoch 3 at 8
  // that the batches from 5 on (epoch 4) contradict.
  REQUIRE(write_leader_epoch_checkpoint(dir / leader_epoch_checkpoint_name,
                                        {{leader_epoch{2}, offset{0}}, {leader_epoch{3}, offset{8}}}));
  auto loaded = load_partition_log(options_for(dir, offset{5}));
  INFO((loaded ? std::string() : loaded.err().to_string()));
  REQUIRE(loaded);
  CHECK(loaded->epochs.entries() ==
        std::vector<epoch_entry>{{leader_epoch{2}, offset{0}}, {leader_epoch{4}, offset{5}}});
}

TEST_CASE("after a truncation a new leader epoch is written at once", "[log][close]") {
  // The recovery point on disk may still be the one from before the cut, above the batches the
  // new epoch will describe: an open would not scan them.
  temp_dir dir;
  threaded_system sys;
  auto log = open_partition_log(sys.sys(), options_for(dir, offset{0}));
  REQUIRE(log);
  sys.track(*log);
  REQUIRE(append_led(sys, *log, 5, 2));
  REQUIRE(sys.request<offset>(*log, timeout, flush_atom_v));
  auto cut = sys.request<offset>(*log, timeout, truncate_atom_v, offset{0});
  REQUIRE(cut);
  REQUIRE(*cut == offset{0});
  REQUIRE(sys.request<offset>(*log, timeout, newepoch_atom_v, leader_epoch{5}));
  auto stored = read_leader_epoch_checkpoint(dir / leader_epoch_checkpoint_name);
  REQUIRE(stored);
  CHECK(*stored == std::vector<epoch_entry>{{leader_epoch{5}, offset{0}}});
}

TEST_CASE("a log opened with a recovery point past its end writes a new leader epoch at once",
          "[log][close]") {
  // The previous process cut the log and died before the recovery point on disk came down: the
  // next open would scan from that point, past the batches the new epoch will describe.
  temp_dir dir;
  write_closed_log(dir, {{5, 2}});
  threaded_system sys;
  auto log = open_partition_log(sys.sys(), options_for(dir, offset{9}));
  REQUIRE(log);
  sys.track(*log);
  REQUIRE(sys.request<offset>(*log, timeout, newepoch_atom_v, leader_epoch{5}));
  auto stored = read_leader_epoch_checkpoint(dir / leader_epoch_checkpoint_name);
  REQUIRE(stored);
  CHECK(*stored == std::vector<epoch_entry>{{leader_epoch{2}, offset{0}}, {leader_epoch{5}, offset{5}}});
}

TEST_CASE("the first flush after an open writes the epoch checkpoint synced, even when the open "
          "had nothing to write",
          "[log][close]") {
  // An earlier open's write back may still be only in the page cache.
  temp_dir dir;
  write_closed_log(dir, {{5, 2}});
  fault_injection_env faults;
  scoped_storage_env installed(faults);
  threaded_system sys;
  auto log = open_partition_log(sys.sys(), options_for(dir, offset{5}));
  REQUIRE(log);
  sys.track(*log);
  CHECK(faults.injected() == 0);
  faults.fail(std::string(leader_epoch_checkpoint_name), storage_op::sync, EIO);
  REQUIRE(append_led(sys, *log, 2, 2));
  auto flushed = sys.request<offset>(*log, timeout, flush_atom_v);
  CHECK(faults.injected() > 0);
  CHECK((!flushed || *flushed == offset{5}));
}

TEST_CASE("a log over a directory just created makes it durable before its first record is "
          "written, and not again",
          "[log][close]") {
  temp_dir data;
  const auto opts = new_directory_options(data);
  const auto dir = opts.dir;
  sync_recorder env;
  scoped_storage_env installed(env);
  threaded_system sys;
  auto log = open_partition_log(sys.sys(), opts);
  REQUIRE(log);
  sys.track(*log);
  CHECK(env.synced().empty());

  REQUIRE(append_led(sys, *log, 2, 1));
  const auto first_write = env.first(storage_op::write, dir / "00000000000000000000.log");
  REQUIRE(first_write != std::string::npos);
  for (const auto& p : {dir / "partition.metadata", dir, data.path()}) {
    INFO(p.string());
    CHECK(env.first(storage_op::sync, p) < first_write);
  }

  REQUIRE(append_led(sys, *log, 2, 1));
  REQUIRE(sys.request<offset>(*log, timeout, flush_atom_v));
  CHECK(env.syncs_of(dir / "partition.metadata") == 1);
  CHECK(env.syncs_of(data.path()) == 1);
}

TEST_CASE("a log whose new directory fails an fsync writes no record and goes offline, without "
          "a syncfs that could not make up for it",
          "[log][close]") {
  temp_dir data;
  const auto opts = new_directory_options(data);
  const auto dir = opts.dir;
  fault_injection_env faults;
  scoped_storage_env installed(faults);
  // Only partition.metadata's fsync fails: a syncfs through the segment would succeed, but after
  // a failed fsync the kernel may have dropped the pages it could not write.
  faults.fail((dir / "partition.metadata").string(), storage_op::sync, EIO);
  threaded_system sys;
  auto log = open_partition_log(sys.sys(), opts);
  REQUIRE(log);
  sys.track(*log);
  CHECK_FALSE(append_led(sys, *log, 2, 1));
  CHECK(std::filesystem::file_size(dir / "00000000000000000000.log") == 0);
  // Offline: with the disk well again, it still refuses.
  faults.clear();
  CHECK_FALSE(append_led(sys, *log, 2, 1));
  CHECK(std::filesystem::file_size(dir / "00000000000000000000.log") == 0);
}

TEST_CASE("a log whose new directory cannot be fsynced for want of descriptors syncs the "
          "filesystem through its segment before the first record",
          "[log][close]") {
  temp_dir data;
  const auto opts = new_directory_options(data);
  const auto dir = opts.dir;
  const auto segment_file = dir / "00000000000000000000.log";
  sync_recorder recorder;
  fault_injection_env faults(recorder);
  scoped_storage_env installed(faults);
  threaded_system sys;
  auto log = open_partition_log(sys.sys(), opts);
  REQUIRE(log);
  sys.track(*log);
  faults.fail((dir / "partition.metadata").string(), storage_op::open, EMFILE);
  REQUIRE(append_led(sys, *log, 2, 1));
  CHECK(faults.injected() > 0);
  const auto first_write = recorder.first(storage_op::write, segment_file);
  REQUIRE(first_write != std::string::npos);
  CHECK(recorder.first(storage_op::sync, segment_file) < first_write);
}
