#include "actors/gateway/connection_limiter.hpp"

#include <catch2/catch.hpp>

using namespace capstan;
using verdict = connection_limiter::verdict;

TEST_CASE("max.connections refuses one connection more and admits again after a release",
          "[gateway][limits]") {
  connection_limiter limiter(2, 100);
  CHECK(limiter.admit("10.0.0.1") == verdict::admitted);
  CHECK(limiter.admit("10.0.0.2") == verdict::admitted);
  CHECK(limiter.admit("10.0.0.3") == verdict::over_max_connections);
  CHECK(limiter.open() == 2);
  CHECK(limiter.open_from("10.0.0.3") == 0);
  limiter.release("10.0.0.1");
  CHECK(limiter.admit("10.0.0.3") == verdict::admitted);
  CHECK(limit_name(verdict::over_max_connections) == "max.connections");
}

TEST_CASE("max.connections.per.ip counts each address on its own", "[gateway][limits]") {
  connection_limiter limiter(100, 2);
  CHECK(limiter.admit("10.0.0.1") == verdict::admitted);
  CHECK(limiter.admit("10.0.0.1") == verdict::admitted);
  CHECK(limiter.admit("10.0.0.1") == verdict::over_max_connections_per_ip);
  CHECK(limiter.admit("10.0.0.2") == verdict::admitted);
  CHECK(limiter.open() == 3);
  CHECK(limiter.open_from("10.0.0.1") == 2);
  limiter.release("10.0.0.1");
  CHECK(limiter.open_from("10.0.0.1") == 1);
  CHECK(limiter.admit("10.0.0.1") == verdict::admitted);
  CHECK(limit_name(verdict::over_max_connections_per_ip) == "max.connections.per.ip");
}
