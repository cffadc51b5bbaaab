#include <catch2/catch.hpp>

#include "runtime/cluster/java_hash.hpp"

using namespace capstan;

TEST_CASE("java_string_hash matches Java's String.hashCode", "[cluster][hash]") {
  STATIC_REQUIRE(java_string_hash("") == 0);
  STATIC_REQUIRE(java_string_hash("hello") == 99162322);
  // Wraps like Java's int: "polygenelubricants".hashCode() == Integer.MIN_VALUE.
  STATIC_REQUIRE(java_string_hash("polygenelubricants") == std::numeric_limits<int32_t>::min());
}

TEST_CASE("kafka_abs maps MIN_VALUE to 0", "[cluster][hash]") {
  STATIC_REQUIRE(kafka_abs(-5) == 5);
  STATIC_REQUIRE(kafka_abs(std::numeric_limits<int32_t>::min()) == 0);
}

TEST_CASE("a partition's fetcher is abs(31 * topic hash + partition) % fetchers",
          "[cluster][hash]") {
  // 31 * 99162322 + 4 wraps to -1220935310 in Java's int arithmetic; its abs % 3 is 2.
  STATIC_REQUIRE(fetcher_index_for("hello", 4, 3) == 2);
  STATIC_REQUIRE(fetcher_index_for("orders", 0, 1) == 0);
  // Every partition lands on a valid fetcher.
  for (int32_t p = 0; p < 100; ++p) {
    auto f = fetcher_index_for("orders", p, 4);
    CHECK(f >= 0);
    CHECK(f < 4);
  }
}
