// A partition log leaves its file work to its I/O worker (actors/log/io_worker_actor.hpp): with
// one scheduler thread and that work stalled, other actors still run.

#include <catch2/catch.hpp>

#include <chrono>
#include <future>

#include <caf/all.hpp>

#include "actors/log/partition_log_actor.hpp"
#include "runtime/actor/caf_error.hpp"
#include "runtime/storage/fault_injection_env.hpp"
#include "tests/support/caf_fixture.hpp"
#include "tests/support/log_builder.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

constexpr caf::timespan timeout = 10s;

actor_config_options one_scheduler_thread() {
  actor_config_options o;
  o.load_middleman = false;
  o.max_threads = 1;
  return o;
}

constexpr timestamp_ms now = 1'700'000'000'000;

// A log "test-0" in `dir` with a fixed clock and no background work.
partition_log_options test_log(const temp_dir& dir) {
  partition_log_options opts;
  opts.dir = dir.path();
  opts.log_name = "test-0";
  opts.clock = [] { return now; };
  opts.schedule_background_work = false;
  return opts;
}

// Whether an unrelated actor on the scheduler answers.
bool scheduler_answers(threaded_system& sys) {
  auto echo = sys.sys().spawn([]() -> caf::behavior { return {[](int32_t x) { return x + 1; }}; });
  sys.track(echo);
  auto answered = sys.request<int32_t>(echo, timeout, int32_t{41});
  return answered && *answered == 42;
}

} // namespace

TEST_CASE("a compaction whose install stalls holds no scheduler thread", "[log][io]") {
  temp_dir dir;
  fault_injection_env faults;
  scoped_storage_env installed(faults);
  threaded_system sys(one_scheduler_thread());
  auto opts = test_log(dir);
  opts.config.segment_bytes = 1500;
  opts.config.cleanup = cleanup_policy::compact;
  auto log = open_partition_log(sys.sys(), opts);
  REQUIRE(log);
  sys.track(*log);
  for (int round = 0; round < 6; ++round)
    REQUIRE(sys.request<append_result>(
      *log, timeout, append_atom_v,
      append_request{to_buffer(make_batch(10, "round" + std::to_string(round), now, 5, 20)),
                     append_origin::leader, leader_epoch{0}}));

  // Only the install renames out of the staging directory.
  faults.stall("compaction.tmp", storage_op::rename);
  auto compacted = std::async(std::launch::async, [&] {
    return sys.request<compaction_stats>(*log, 60s, compact_atom_v);
  });
  struct release_on_exit {
    fault_injection_env& faults;
    ~release_on_exit() { faults.release(); }
  } release_guard{faults};
  REQUIRE(faults.wait_stalled(1, 10s));
  CHECK(scheduler_answers(sys));
  CHECK(compacted.wait_for(0s) == std::future_status::timeout);

  faults.release();
  REQUIRE(compacted.wait_for(30s) == std::future_status::ready);
  auto stats = compacted.get();
  INFO((stats ? std::string() : caf::to_string(stats.error())));
  REQUIRE(stats);
  CHECK(stats->segments_cleaned > 0);
  CHECK(stats->records_removed > 0);
  REQUIRE(sys.request<offset>(*log, timeout, close_atom_v));
}

TEST_CASE("an append whose roll cannot create the new segment gets the roll's error", "[log][io]") {
  temp_dir dir;
  fault_injection_env faults;
  scoped_storage_env installed(faults);
  threaded_system sys;
  auto opts = test_log(dir);
  opts.config.segment_bytes = 200;
  auto log = open_partition_log(sys.sys(), opts);
  REQUIRE(log);
  sys.track(*log);
  auto append = [&](const std::string& prefix) {
    return sys.request<append_result>(
      *log, timeout, append_atom_v,
      append_request{to_buffer(make_batch(10, prefix, now, 0, 20)), append_origin::leader, leader_epoch{0}});
  };
  REQUIRE(append("first"));
  faults.fail("00000000000000000010.log", storage_op::open, ENOSPC);
  auto refused = append("second");
  REQUIRE_FALSE(refused);
  const auto e = from_caf_error(refused.error());
  CHECK(e.code == errc::kafka_storage_error);
  CHECK(e.message.find("00000000000000000010.log") != std::string::npos);
  CHECK(e.message.find("No space left on device") != std::string::npos);
}

// Before: a failed read only failed that read; the partition went on serving from a disk that
// had just failed, as if nothing happened.
TEST_CASE("a read the disk fails takes the log offline with KAFKA_STORAGE_ERROR, as a failed write",
          "[log][io]") {
  temp_dir dir;
  fault_injection_env faults;
  scoped_storage_env installed(faults);
  threaded_system sys;
  auto log = open_partition_log(sys.sys(), test_log(dir));
  REQUIRE(log);
  sys.track(*log);
  for (const char* prefix : {"first", "second"})
    REQUIRE(sys.request<append_result>(*log, timeout, append_atom_v,
                                       append_request{to_buffer(make_batch(3, prefix, now)),
                                                      append_origin::leader, leader_epoch{0}}));

  caf::scoped_actor watcher{sys.sys()};
  watcher->monitor(*log);
  faults.fail(dir.path().string(), storage_op::read, EIO);
  // Not the batch just appended: the log answers that one from memory, without a read.
  auto refused = sys.request<log_slice>(*log, timeout, read_atom_v, read_request{offset{0}});
  REQUIRE_FALSE(refused);
  const auto e = from_caf_error(refused.error());
  CHECK(e.code == errc::kafka_storage_error);
  CHECK(e.message.find("Input/output error") != std::string::npos);

  std::optional<error> exit_reason;
  watcher->receive([&](caf::down_msg& down) { exit_reason = from_caf_error(down.reason); },
                   caf::after(timeout) >> [] {});
  REQUIRE(exit_reason);
  CHECK(exit_reason->code == errc::kafka_storage_error);
  CHECK(exit_reason->message.find("pread") != std::string::npos);
}
