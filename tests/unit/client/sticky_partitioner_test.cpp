#include <catch2/catch.hpp>

#include <set>

#include "runtime/client/partitioner.hpp"

using namespace capstan::client;

TEST_CASE("keyless records stick to one partition until a new batch", "[client][partitioner]") {
  sticky_partitioner sticky(42);
  const int32_t first = sticky.partition("t", 8);
  for (int i = 0; i < 100; ++i) CHECK(sticky.partition("t", 8) == first);

  sticky.on_new_batch("t", 8, first);
  const int32_t second = sticky.partition("t", 8);
  CHECK(second != first);
  CHECK(second >= 0);
  CHECK(second < 8);
}

TEST_CASE("a stale new-batch notice does not move the sticky partition", "[client][partitioner]") {
  sticky_partitioner sticky(7);
  const int32_t current = sticky.partition("t", 4);
  sticky.on_new_batch("t", 4, (current + 1) % 4);
  CHECK(sticky.partition("t", 4) == current);
}

TEST_CASE("sticky partitions are per topic and spread over every partition", "[client][partitioner]") {
  sticky_partitioner sticky(1);
  std::set<int32_t> seen;
  for (int i = 0; i < 400; ++i) {
    const int32_t p = sticky.partition("spread", 5);
    seen.insert(p);
    sticky.on_new_batch("spread", 5, p);
  }
  CHECK(seen.size() == 5);
  CHECK(sticky.partition("single", 1) == 0);
  sticky.on_new_batch("single", 1, 0);
  CHECK(sticky.partition("single", 1) == 0);
}
