#include <catch2/catch.hpp>

#include "actors/replica/control_sequence.hpp"

using namespace capstan;
using verdict = control_sequence::verdict;

TEST_CASE("control messages apply in sequence after a full state, and a gap is refused until the "
          "next full state",
          "[replica][control]") {
  control_sequence s;
  // Nothing of epoch 4 yet: a delta is a gap (the full state that starts the stream was lost).
  CHECK(s.admit(4, 2, false) == verdict::gap);
  CHECK(s.admit(4, 1, true) == verdict::apply);
  CHECK(s.admit(4, 2, false) == verdict::apply);
  CHECK(s.admit(4, 3, false) == verdict::apply);
  CHECK(s.last() == 3);
  // 4 was lost: 5 and 6 are refused and change nothing.
  CHECK(s.admit(4, 5, false) == verdict::gap);
  CHECK(s.admit(4, 6, false) == verdict::gap);
  CHECK(s.last() == 3);
  // The controller's answer to the gap: the whole state again, after which the stream goes on.
  CHECK(s.admit(4, 7, true) == verdict::apply);
  CHECK(s.admit(4, 8, false) == verdict::apply);
  CHECK(s.epoch() == 4);
  CHECK(s.last() == 8);
}

TEST_CASE("a control message that arrives late, after a newer one applied, changes nothing",
          "[replica][control]") {
  control_sequence s;
  REQUIRE(s.admit(2, 1, true) == verdict::apply);
  REQUIRE(s.admit(2, 2, false) == verdict::apply);
  REQUIRE(s.admit(2, 3, true) == verdict::apply);
  CHECK(s.admit(2, 2, false) == verdict::duplicate);
  // A full state that the controller gave up on, arriving after the one that replaced it.
  CHECK(s.admit(2, 1, true) == verdict::duplicate);
  CHECK(s.last() == 3);
}

TEST_CASE("a new controller's stream starts with its full state, and unsequenced messages always "
          "apply",
          "[replica][control]") {
  control_sequence s;
  REQUIRE(s.admit(1, 1, true) == verdict::apply);
  REQUIRE(s.admit(1, 2, false) == verdict::apply);
  // Epoch 2's first delta before its full state: refused, whatever its number.
  CHECK(s.admit(2, 3, false) == verdict::gap);
  CHECK(s.admit(2, 1, true) == verdict::apply);
  CHECK(s.admit(2, 2, false) == verdict::apply);
  CHECK(s.admit(2, 0, false) == verdict::apply);
  CHECK(s.last() == 2);
}
