#include <catch2/catch.hpp>

#include "runtime/storage/log_config.hpp"
#include "runtime/storage/log_policy.hpp"

using namespace capstan;

namespace {

segment_meta seg(int64_t base, int64_t next, int64_t size, timestamp_ms ts) {
  return {offset{base}, offset{next}, size, ts, 0};
}

} // namespace

TEST_CASE("an empty active segment never rolls, a full or old one does", "[log][policy]") {
  log_config c;
  c.segment_bytes = 1000;
  c.segment_ms = 100;
  CHECK_FALSE(should_roll(seg(0, 0, 0, no_timestamp), 5000, offset{10}, 1000, c));
  CHECK_FALSE(should_roll(seg(0, 5, 500, 1), 500, offset{10}, 50, c));
  CHECK(should_roll(seg(0, 5, 501, 1), 500, offset{10}, 50, c));
  CHECK(should_roll(seg(0, 5, 10, 1), 10, offset{10}, 100, c));
  CHECK(should_roll(seg(0, 5, 10, 1), 10, offset{int64_t{1} << 32}, 50, c));
}

TEST_CASE("retention by time stops at the first segment still young", "[log][policy]") {
  log_config c;
  c.retention_ms = 100;
  std::vector<segment_meta> s = {seg(0, 10, 100, 10), seg(10, 20, 100, 500), seg(20, 30, 100, 20),
                                 seg(30, 30, 0, no_timestamp)};
  CHECK(segments_to_delete(s, 1000, c) == 3);
  CHECK(segments_to_delete(s, 550, c) == 1);
  c.retention_ms = -1;
  CHECK(segments_to_delete(s, 1000000, c) == 0);
}

TEST_CASE("retention by size keeps at least retention.bytes and the active segment",
          "[log][policy]") {
  log_config c;
  c.retention_ms = -1;
  c.retention_bytes = 250;
  std::vector<segment_meta> s = {seg(0, 10, 100, 1), seg(10, 20, 100, 1), seg(20, 30, 100, 1),
                                 seg(30, 35, 50, 1)};
  CHECK(segments_to_delete(s, 0, c) == 1);
  c.retention_bytes = 0;
  CHECK(segments_to_delete(s, 0, c) == 3);
}

TEST_CASE("compaction runs once enough sealed bytes are dirty", "[log][policy]") {
  log_config c;
  c.cleanup = cleanup_policy::compact;
  std::vector<segment_meta> s = {seg(0, 10, 100, 1), seg(10, 20, 100, 1), seg(20, 30, 100, 1)};
  CHECK(should_compact(s, offset{0}, c));
  CHECK(should_compact(s, offset{10}, c));
  CHECK_FALSE(should_compact(s, offset{20}, c));
  c.cleanup = cleanup_policy::delete_segments;
  CHECK_FALSE(should_compact(s, offset{0}, c));
}

TEST_CASE("log configs parse Kafka names and refuse bad values by name", "[log][config]") {
  auto c = log_config::from_map({{"segment.bytes", "2048"}, {"cleanup.policy", "compact"},
                                 {"retention.ms", "-1"}, {"min.cleanable.dirty.ratio", "0.25"}});
  REQUIRE(c);
  CHECK(c->segment_bytes == 2048);
  CHECK(c->cleanup == cleanup_policy::compact);
  CHECK(c->retention_ms == -1);
  CHECK(c->min_cleanable_dirty_ratio == 0.25);

  auto unknown = log_config::from_map({{"segment.byte", "1"}});
  REQUIRE_FALSE(unknown);
  CHECK(unknown.code() == errc::invalid_config);
  CHECK(unknown.err().message.find("segment.byte") != std::string::npos);
  CHECK_FALSE(log_config::from_map({{"segment.bytes", "12x"}}));
  CHECK_FALSE(log_config::from_map({{"segment.bytes", "1"}}));
  CHECK_FALSE(log_config::from_map({{"cleanup.policy", "shred"}}));
  CHECK_FALSE(log_config::from_map({{"min.cleanable.dirty.ratio", "2"}}));
  CHECK(log_config{}.to_map().at("segment.bytes") == "1073741824");
}
