#pragma once

// Drives one partition log actor on a real (threaded) actor system with blocking calls bounded by
// a timeout, so log tests read as sequences of operations. A failed call throws, failing the test;
// the harness's destructor still shuts the system down.

#include <atomic>
#include <memory>
#include <optional>

#include "actors/log/partition_log_actor.hpp"
#include "tests/support/caf_fixture.hpp"
#include "tests/support/log_builder.hpp"

namespace capstan::test {

class log_harness {
public:
  // A clock the test moves by hand; starts at `start_ms`.
  explicit log_harness(std::filesystem::path dir, log_config config = {},
                       timestamp_ms start_ms = 1'700'000'000'000);
  ~log_harness();
  log_harness(const log_harness&) = delete;
  log_harness& operator=(const log_harness&) = delete;

  // Opens (recovers) the log with the given recovery point. REQUIRES: not open.
  void open(offset recovery_point = offset{0});
  // Flushes and closes; returns the recovery point to reopen with.
  offset close();
  // Drops the actor without flushing or closing, as a crash would (the files stay as they are).
  void crash();
  bool is_open() const { return log_.has_value(); }

  caf::expected<append_result> append(bytes batch, append_origin origin = append_origin::leader);
  caf::expected<log_slice> read(offset from, int64_t max_bytes = 1 << 20,
                                offset upto = offset{std::numeric_limits<int64_t>::max()});
  // Every record from `from` to the log end, reading in chunks of `max_bytes`.
  std::vector<read_record> read_all(offset from = offset{0}, int64_t max_bytes = 1 << 20);
  caf::expected<offset> truncate(offset to);
  caf::expected<offset> flush();
  caf::expected<int32_t> retain();
  caf::expected<compaction_stats> compact();
  caf::expected<int64_t> offset_for_time(timestamp_ms ts);
  log_info info();
  // Runs the background schedule once now, at the harness clock (retention, flush.ms,
  // compaction, producer expiry); it then goes on by timer.
  void tick();

  void advance_clock(int64_t ms) { *now_ += ms; }
  timestamp_ms now() const { return *now_; }
  log_config& config() { return config_; }
  caf::actor_system& sys() { return system_->sys(); }

  static constexpr caf::timespan timeout = std::chrono::seconds(30);

private:
  std::filesystem::path dir_;
  log_config config_;
  std::shared_ptr<std::atomic<timestamp_ms>> now_;
  std::unique_ptr<threaded_system> system_;
  std::optional<partition_log_actor> log_;
};

} // namespace capstan::test
