#include "actors/gateway/parked_fetch_limiter.hpp"

#include <catch2/catch.hpp>

using namespace capstan;

TEST_CASE("parked fetches are capped per connection and per node", "[gateway][limits]") {
  parked_fetch_limiter limiter(2, 3);
  parked_fetch_limiter::connection_count a;
  parked_fetch_limiter::connection_count b;
  CHECK(limiter.try_park(a));
  CHECK(limiter.try_park(a));
  CHECK_FALSE(limiter.try_park(a)); // a's cap
  CHECK(a.parked.load() == 2);
  CHECK(limiter.try_park(b));
  CHECK_FALSE(limiter.try_park(b)); // the node's cap
  CHECK(b.parked.load() == 1);
  CHECK(limiter.parked() == 3);
  limiter.release(a);
  CHECK(limiter.try_park(b));
  CHECK(limiter.parked() == 3);
  CHECK(a.parked.load() == 1);
  CHECK(b.parked.load() == 2);
}

TEST_CASE("a cap of zero parks nothing", "[gateway][limits]") {
  parked_fetch_limiter limiter(0, 10);
  parked_fetch_limiter::connection_count c;
  CHECK_FALSE(limiter.try_park(c));
  CHECK(limiter.parked() == 0);
}
