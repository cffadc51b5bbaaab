#include "actors/armed_tick.hpp"

#include <cstdint>

#include <catch2/catch.hpp>

using namespace capstan;

TEST_CASE("armed_tick: a tick is sent only when none armed comes by the deadline",
          "[actor][tick]") {
  armed_tick<int64_t> tick;
  CHECK(tick.arm(100));       // none armed
  CHECK_FALSE(tick.arm(150)); // the one for 100 comes first
  CHECK(tick.arm(50));        // earlier than the armed one
  CHECK_FALSE(tick.arm(50));

  // A tick that arrives early (another sender's) leaves the armed one armed.
  tick.arrived(40);
  CHECK_FALSE(tick.arm(60));
  // Once it has fired, the next deadline needs a tick of its own.
  tick.arrived(50);
  CHECK(tick.arm(150));
}
