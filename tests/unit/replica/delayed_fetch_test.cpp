#include <catch2/catch.hpp>

#include "actors/replica/delayed_fetch.hpp"

using namespace capstan;
using namespace std::chrono_literals;

namespace {

fetch_request want(int32_t min_bytes) {
  fetch_request r;
  r.min_bytes = min_bytes;
  return r;
}

} // namespace

TEST_CASE("min_bytes of zero or less never waits, one or more needs that many bytes",
          "[replica][delayed_fetch]") {
  CHECK(delayed_fetch_set::satisfied(want(0), 0));
  CHECK(delayed_fetch_set::satisfied(want(-5), 0));
  CHECK_FALSE(delayed_fetch_set::satisfied(want(1), 0));
  CHECK(delayed_fetch_set::satisfied(want(1), 1));
  CHECK_FALSE(delayed_fetch_set::satisfied(want(100), 99));
  CHECK(delayed_fetch_set::satisfied(want(100), 100));
}

TEST_CASE("a parked fetch is ready once found plus newly appended bytes reach min_bytes",
          "[replica][delayed_fetch]") {
  delayed_fetch_set set;
  const auto t0 = std::chrono::steady_clock::now();
  auto a = set.park(want(100), 30, 1000, t0 + 1s);
  auto b = set.park(want(10), 0, 1050, t0 + 1s);
  CHECK(set.take_ready(1050).empty());
  auto ready = set.take_ready(1060);
  REQUIRE(ready.size() == 1);
  CHECK(ready[0].id == b);
  CHECK(set.take_ready(1069).empty());
  ready = set.take_ready(1070);
  REQUIRE(ready.size() == 1);
  CHECK(ready[0].id == a);
  CHECK(set.empty());
}

TEST_CASE("parked fetches expire at their deadline, and close takes them all",
          "[replica][delayed_fetch]") {
  delayed_fetch_set set;
  const auto t0 = std::chrono::steady_clock::now();
  set.park(want(1), 0, 0, t0 + 10ms);
  set.park(want(1), 0, 0, t0 + 50ms);
  set.park(want(1), 0, 0, t0 + 90ms);
  CHECK(set.take_expired(t0).empty());
  CHECK(set.take_expired(t0 + 50ms).size() == 2);
  CHECK(set.size() == 1);
  CHECK(set.take_all().size() == 1);
  CHECK(set.empty());
}

TEST_CASE("take_below answers the fetches from below the high watermark, whatever their bytes",
          "[replica][delayed_fetch]") {
  delayed_fetch_set set;
  const auto t0 = std::chrono::steady_clock::now();
  auto at = [](int64_t from) {
    auto r = want(1 << 20);
    r.from = offset{from};
    return r;
  };
  auto low = set.park(at(2), 0, 0, t0 + 1s);
  set.park(at(5), 0, 0, t0 + 1s);
  auto taken = set.take_below(offset{5});
  REQUIRE(taken.size() == 1);
  CHECK(taken[0].id == low);
  CHECK(set.size() == 1);
}
