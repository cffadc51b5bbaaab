#include <catch2/catch.hpp>

#include <limits>
#include <string>
#include <utility>
#include <vector>

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

TEST_CASE("retention deletes nothing of a log whose cleanup.policy is compact", "[log][policy]") {
  // Kafka applies retention only when cleanup.policy contains delete: __consumer_offsets
  // (compact) keeps a group's last commit however old it is.
  log_config c;
  c.cleanup = cleanup_policy::compact;
  c.retention_ms = 100;
  c.retention_bytes = 0;
  std::vector<segment_meta> s = {seg(0, 10, 100, 10), seg(10, 20, 100, 20),
                                 seg(20, 20, 0, no_timestamp)};
  CHECK(segments_to_delete(s, 1000, c) == 0);
  c.cleanup = cleanup_policy::delete_segments;
  CHECK(segments_to_delete(s, 1000, c) == 2);
  c.cleanup = cleanup_policy::compact_delete;
  CHECK(segments_to_delete(s, 1000, c) == 2);
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
  c.cleanup = cleanup_policy::compact_delete;
  CHECK(should_compact(s, offset{0}, c));
}

TEST_CASE("cleanup.policy takes Kafka's list: delete, compact or both, in either order",
          "[log][config]") {
  for (const auto& [text, policy] :
       std::vector<std::pair<std::string, cleanup_policy>>{
         {"delete", cleanup_policy::delete_segments},
         {"compact", cleanup_policy::compact},
         {"compact,delete", cleanup_policy::compact_delete},
         {"delete, compact", cleanup_policy::compact_delete}}) {
    INFO(text);
    auto c = log_config::from_map({{"cleanup.policy", text}});
    REQUIRE(c);
    CHECK(c->cleanup == policy);
  }
  CHECK(log_config::from_map({{"cleanup.policy", "compact,delete"}})->to_map().at(
          "cleanup.policy") == "compact,delete");
  for (const std::string bad : {"", "shred", "compact,", ",delete", "compact,compact",
                                "compact;delete", "compact,delete,compact"}) {
    INFO("'" << bad << "'");
    auto c = log_config::from_map({{"cleanup.policy", bad}});
    REQUIRE_FALSE(c);
    CHECK(c.code() == errc::invalid_config);
  }
}

TEST_CASE("log configs parse Kafka names and refuse bad values by name", "[log][config]") {
  auto c = log_config::from_map({{"segment.bytes", "2097152"}, {"cleanup.policy", "compact"},
                                 {"retention.ms", "-1"}, {"min.cleanable.dirty.ratio", "0.25"},
                                 {"message.timestamp.before.max.ms", "86400000"},
                                 {"message.timestamp.after.max.ms", "0"}});
  REQUIRE(c);
  CHECK(c->segment_bytes == 2097152);
  CHECK(c->cleanup == cleanup_policy::compact);
  CHECK(c->retention_ms == -1);
  CHECK(c->min_cleanable_dirty_ratio == 0.25);
  // Shown as Kafka shows a double, the same in a topic's configs and a broker's.
  CHECK(c->to_map().at("min.cleanable.dirty.ratio") == "0.25");
  CHECK(log_config{}.to_map().at("min.cleanable.dirty.ratio") == "0.5");
  CHECK(c->timestamp_before_max_ms == 86400000);
  CHECK(c->timestamp_after_max_ms == 0);

  auto unknown = log_config::from_map({{"segment.byte", "1"}});
  REQUIRE_FALSE(unknown);
  CHECK(unknown.code() == errc::invalid_config);
  CHECK(unknown.err().message.find("segment.byte") != std::string::npos);
  CHECK_FALSE(log_config::from_map({{"segment.bytes", "12x"}}));
  CHECK_FALSE(log_config::from_map({{"cleanup.policy", "shred"}}));
  CHECK_FALSE(log_config::from_map({{"min.cleanable.dirty.ratio", "2"}}));
  CHECK_FALSE(log_config::from_map({{"message.timestamp.after.max.ms", "-1"}}));
  CHECK(log_config{}.to_map().at("segment.bytes") == "1073741824");
}

TEST_CASE("topic configs below Kafka's minimums are refused naming the key", "[log][config]") {
  const std::vector<std::pair<std::string, std::string>> refused = {
    {"segment.bytes", "14"},        // Kafka 4: at least 1 MiB (KIP-1030)
    {"segment.bytes", "1048575"},
    {"segment.ms", "1"},            // KIP-1030: at least one minute
    {"segment.ms", "59999"},
    {"retention.ms", "-2"},
    {"index.interval.bytes", "-1"},
    {"max.message.bytes", "-1"},
    {"flush.messages", "0"},
    {"flush.ms", "-1"},
    {"delete.retention.ms", "-1"},
    {"min.cleanable.dirty.ratio", "-0.1"},
    {"message.timestamp.before.max.ms", "-1"},
  };
  for (const auto& [key, value] : refused) {
    INFO(key << "=" << value);
    auto c = log_config::from_map({{key, value}});
    REQUIRE_FALSE(c);
    CHECK(c.code() == errc::invalid_config);
    CHECK(c.err().message.rfind(key, 0) == 0);
  }
  CHECK(log_config::from_map({{"segment.bytes", "1048576"}, {"segment.ms", "60000"}}));
}

TEST_CASE("broker schedules are not topic configs and refuse intervals that would spin",
          "[log][config]") {
  for (const char* key : {"log.cleaner.backoff.ms", "log.retention.check.interval.ms"}) {
    INFO(key);
    auto topic = log_config::from_map({{key, "60000"}});
    REQUIRE_FALSE(topic);
    CHECK(topic.code() == errc::invalid_config);
    CHECK_THAT(topic.err().message, Catch::Contains(key));
    for (const char* tiny : {"0", "1", "999"}) {
      auto broker = log_config::from_map({{key, tiny}}, log_config{}, config_scope::broker);
      REQUIRE_FALSE(broker);
      CHECK(broker.code() == errc::invalid_config);
      CHECK(broker.err().message.rfind(key, 0) == 0);
    }
    CHECK(log_config::from_map({{key, "1000"}}, log_config{}, config_scope::broker));
  }
  CHECK(log_config{}.to_map().count("log.cleaner.backoff.ms") == 0);
}

TEST_CASE("producer.id.expiration.ms is a broker setting of at least 1 ms", "[log][config]") {
  CHECK(log_config{}.producer_id_expiration_ms == 86400000);
  auto topic = log_config::from_map({{"producer.id.expiration.ms", "60000"}});
  REQUIRE_FALSE(topic);
  CHECK(topic.code() == errc::invalid_config);
  auto zero = log_config::from_map({{"producer.id.expiration.ms", "0"}}, log_config{},
                                   config_scope::broker);
  REQUIRE_FALSE(zero);
  CHECK(zero.code() == errc::invalid_config);
  auto set = log_config::from_map({{"producer.id.expiration.ms", "60000"}}, log_config{},
                                  config_scope::broker);
  REQUIRE(set);
  CHECK(set->producer_id_expiration_ms == 60000);
}

TEST_CASE("the background timer never fires more than once a second", "[log][policy]") {
  log_config c;
  CHECK(background_interval_ms(c) == 15000); // log.cleaner.backoff.ms
  c.flush_ms = 0;                            // Kafka accepts it; it must not drive a spin
  CHECK(background_interval_ms(c) == min_schedule_interval_ms);
  c.flush_ms = 2500;
  CHECK(background_interval_ms(c) == 2500);
  c = log_config{};
  c.retention_check_interval_ms = c.cleaner_backoff_ms = std::numeric_limits<int64_t>::max();
  CHECK(background_interval_ms(c) == 60000);
}

TEST_CASE("retention by time never overflows, whatever the clock or setting", "[log][policy]") {
  log_config c;
  c.retention_ms = std::numeric_limits<int64_t>::max();
  std::vector<segment_meta> s = {seg(0, 10, 100, 5), seg(10, 20, 100, 10),
                                 seg(20, 20, 0, no_timestamp)};
  // now - retention.ms is below every timestamp: nothing is old enough (a wrapped subtraction
  // would give a horizon near the top of int64 and delete both).
  CHECK(segments_to_delete(s, -2, c) == 0);
  c.retention_ms = std::numeric_limits<int64_t>::max() - 7;
  CHECK(segments_to_delete(s, std::numeric_limits<int64_t>::max(), c) == 1);
}

TEST_CASE("a sealed segment without timestamps is aged from when it was sealed", "[log][policy]") {
  log_config c;
  c.retention_ms = 100;
  auto sealed_at = [](segment_meta m, timestamp_ms created) {
    m.created_ms = created;
    return m;
  };
  // Records stamped -1 (or below) leave no max timestamp; Kafka then goes by the file's
  // last-modified time. Without a fallback such a segment, and every one after it, stays forever.
  std::vector<segment_meta> s = {seg(0, 10, 100, no_timestamp), sealed_at(seg(10, 20, 100, -5), 1000),
                                 sealed_at(seg(20, 30, 100, 1500), 2000),
                                 sealed_at(seg(30, 30, 0, no_timestamp), 3000)};
  CHECK(segments_to_delete(s, 1100, c) == 0);
  CHECK(segments_to_delete(s, 1101, c) == 1);
  CHECK(segments_to_delete(s, 2101, c) == 3);
  // An empty sealed segment (compaction can leave one) is still never deleted by time.
  s[0].size_bytes = 0;
  CHECK(segments_to_delete(s, 1000000, c) == 0);
}
