#include "runtime/actor/log_throttle.hpp"

#include <catch2/catch.hpp>

using namespace capstan;
using namespace std::chrono_literals;

TEST_CASE("log_throttle lets one line per interval through and counts the rest",
          "[actor][logging]") {
  log_throttle throttle(10s);
  const auto t0 = log_throttle::clock::time_point{} + 1h;
  CHECK(throttle.admit(t0) == uint64_t{0});
  CHECK_FALSE(throttle.admit(t0 + 1s));
  CHECK_FALSE(throttle.admit(t0 + 9s));
  CHECK(throttle.admit(t0 + 10s) == uint64_t{2});
  CHECK_FALSE(throttle.admit(t0 + 11s));
  CHECK(throttle.admit(t0 + 25s) == uint64_t{1});
}
