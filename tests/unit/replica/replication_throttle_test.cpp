// leader.replication.throttled.rate's token bucket (actors/replica/replication_throttle.hpp).

#include <catch2/catch.hpp>

#include "actors/replica/replication_throttle.hpp"

using namespace capstan;
using namespace std::chrono_literals;

TEST_CASE("the replication throttle allows a second's worth, lets one read overdraw it, and "
          "refills at its rate",
          "[replica][throttle]") {
  const replication_throttle::clock::time_point t0{};
  replication_throttle t;
  CHECK(t.allowance(5000, t0) == 5000); // no rate: no limit
  t.set_rate(1000, t0);
  CHECK(t.allowance(5000, t0) == 1000);
  CHECK(t.allowance(300, t0) == 300);
  t.consumed(1600); // a first batch larger than the allowance is read whole
  CHECK(t.allowance(5000, t0 + 500ms) == 0); // -600 + 500
  CHECK(t.allowance(5000, t0 + 1000ms) == 400);
  // Idle, it holds no more than a second's worth.
  CHECK(t.allowance(5000, t0 + 60s) == 1000);
  t.set_rate(0, t0 + 60s);
  t.consumed(1'000'000);
  CHECK(t.allowance(5000, t0 + 60s) == 5000);
}
