#include <catch2/catch.hpp>

#include <set>

#include "tests/support/free_port.hpp"

using namespace capstan::test;

// Before, each call drew at random from some 20,000 ports: two thousand calls drew one port
// twice about 90 times over, and three voters of one cluster once got the same port.
TEST_CASE("free_port never hands out a port twice in one process", "[support]") {
  std::set<uint16_t> seen;
  for (int i = 0; i < 2000; ++i) CHECK(seen.insert(free_port()).second);
}
