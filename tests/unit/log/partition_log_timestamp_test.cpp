// Produced timestamps against retention: the leader refuses CreateTimes outside
// message.timestamp.before.max.ms / after.max.ms and max timestamps the records do not bear out,
// so one producer's stamps cannot delete other producers' records early nor keep them forever
// (docs/storage.md, "Timestamps").

#include <catch2/catch.hpp>

#include <caf/all.hpp>

#include "actors/log/partition_log_actor.hpp"
#include "runtime/actor/caf_error.hpp"
#include "runtime/batch/crc32c.hpp"
#include "runtime/batch/record_batch_format.hpp"
#include "runtime/batch/record_batch_view.hpp"
#include "tests/support/log_harness.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace capstan::test;
namespace bf = capstan::batch_format;

namespace {

constexpr int64_t hour_ms = 3600000;
constexpr int64_t day_ms = 24 * hour_ms;
constexpr int64_t ten_years_ms = 3650 * day_ms;

errc code_of(const caf::error& e) { return from_caf_error(e).code; }

// Small segments that roll an hour after they were created; retention.ms of a week.
log_config retention_config() {
  log_config c;
  c.segment_bytes = 100000;
  c.segment_ms = hour_ms;
  c.retention_ms = 7 * day_ms;
  return c;
}

// A batch whose records say `record_ts` but whose header claims `header_max`, CRC fixed up: what a
// lying producer sends.
bytes with_header_max(bytes batch, timestamp_ms header_max) {
  bf::store_be<int64_t>(batch.data() + bf::max_timestamp_at, header_max);
  bf::store_be<uint32_t>(batch.data() + bf::crc_at,
                         crc32c(bytes_view(batch).subspan(bf::attributes_at)));
  return batch;
}

// Starts a new segment: appends one batch after segment.ms has passed.
void roll(log_harness& log) {
  log.advance_clock(2 * hour_ms);
  REQUIRE(log.append(make_batch(1, "next", log.now())));
}

} // namespace

TEST_CASE("a batch stamped far in the future cannot pin a segment past retention.ms",
          "[log][timestamp][retention]") {
  temp_dir dir;
  log_harness log(dir.path(), retention_config());
  log.open();
  REQUIRE(log.append(make_batch(2, "a", log.now())));

  SECTION("stamped in its records") {
    auto future = log.append(make_batch(1, "evil", log.now() + ten_years_ms));
    REQUIRE_FALSE(future);
    CHECK(code_of(future.error()) == errc::invalid_timestamp);
    CHECK_THAT(from_caf_error(future.error()).message, Catch::Contains("message.timestamp.after.max.ms"));
  }
  SECTION("claimed in the header alone") {
    auto lie = log.append(with_header_max(make_batch(1, "evil", log.now()), log.now() + ten_years_ms));
    REQUIRE_FALSE(lie);
    CHECK(code_of(lie.error()) == errc::invalid_timestamp);
  }
  // Within after.max.ms (an hour, as Kafka 4) a clock a little ahead is fine.
  REQUIRE(log.append(make_batch(2, "b", log.now() + hour_ms)));
  roll(log);
  CHECK(log.info().segment_count == 2);

  log.advance_clock(8 * day_ms);
  REQUIRE(*log.retain() == 1);
  CHECK(log.info().log_start == offset{4});
}

TEST_CASE("a batch stamped far in the past cannot get the other records of its segment deleted",
          "[log][timestamp][retention]") {
  temp_dir dir;
  log_harness log(dir.path(), retention_config());
  log.open();
  REQUIRE(log.append(make_batch(2, "a", log.now())));
  // Kafka's default message.timestamp.before.max.ms takes any past time: the segment's max
  // timestamp is still the newest record's, so retention keeps it for the others' sake.
  REQUIRE(log.append(make_batch(1, "old", log.now() - ten_years_ms)));
  auto lie = log.append(with_header_max(make_batch(1, "evil", log.now()), log.now() - ten_years_ms));
  REQUIRE_FALSE(lie);
  CHECK(code_of(lie.error()) == errc::invalid_timestamp);
  REQUIRE(log.append(make_batch(2, "b", log.now())));
  roll(log);

  log.advance_clock(6 * day_ms);
  CHECK(*log.retain() == 0);
  // What was stored comes back the same after a restart.
  const offset recovery = log.close();
  log.open(recovery);
  CHECK(*log.retain() == 0);
  auto records = log.read_all();
  REQUIRE(records.size() == 6);
  CHECK(records[2].value == "old-0");

  log.advance_clock(2 * day_ms);
  CHECK(*log.retain() == 1);
}

TEST_CASE("records without a timestamp cannot pin their segment past retention.ms",
          "[log][timestamp][retention]") {
  temp_dir dir;
  log_harness log(dir.path(), retention_config());
  log.open();
  // -1 is "no timestamp": Kafka takes it without a window check, so a segment may hold nothing
  // else. It is aged from when it was sealed, as Kafka ages it by the file's modification time.
  REQUIRE(log.append(make_batch(3, "none", no_timestamp)));
  roll(log);
  log.advance_clock(6 * day_ms);
  CHECK(*log.retain() == 0);
  log.advance_clock(2 * day_ms);
  CHECK(*log.retain() == 1);
  CHECK(log.info().log_start == offset{3});
}

TEST_CASE("message.timestamp.before.max.ms refuses records older than it", "[log][timestamp]") {
  temp_dir dir;
  log_config config = retention_config();
  config.timestamp_before_max_ms = day_ms;
  log_harness log(dir.path(), config);
  log.open();
  REQUIRE(log.append(make_batch(1, "a", log.now() - day_ms)));
  auto old = log.append(make_batch(1, "old", log.now() - day_ms - 1));
  REQUIRE_FALSE(old);
  CHECK(code_of(old.error()) == errc::invalid_timestamp);
  CHECK(log.info().log_end == offset{1});
}

TEST_CASE("replicated batches are not judged by this node's clock", "[log][timestamp]") {
  temp_dir dir;
  log_harness log(dir.path(), retention_config());
  log.open();
  // The leader accepted it against its own clock and window; a follower stores what it has.
  auto batch = make_batch(1, "r", log.now() + 2 * hour_ms);
  set_base_offset(batch, offset{0});
  REQUIRE(log.append(batch, append_origin::replication));
}
