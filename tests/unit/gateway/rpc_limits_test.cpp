#include "actors/gateway/rpc_limits.hpp"

#include <sys/resource.h>

#include <catch2/catch.hpp>

#include "actors/gateway/request_validation.hpp"

using namespace capstan;

TEST_CASE("fetch responses are sized to fit socket.request.max.bytes", "[gateway][limits]") {
  rpc_limits limits;
  CHECK(limits.max_fetch_bytes() == max_fetch_bytes);
  CHECK(limits.traversal_limit_words() == 104857600 / 8);
  limits.socket_request_max_bytes = min_socket_request_max_bytes;
  CHECK(limits.max_fetch_bytes() < min_socket_request_max_bytes);
  CHECK(limits.max_fetch_bytes() > min_socket_request_max_bytes / 2);
  limits.queued_max_request_bytes_per_connection = 8192;
  CHECK(limits.flow_limit_words() == 1024);
}

TEST_CASE("max.connections defaults to half the open-file limit", "[gateway][limits]") {
  rlimit saved{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &saved) == 0);
  REQUIRE(saved.rlim_max >= 1000);
  rlimit lowered = saved;
  lowered.rlim_cur = 1000;
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &lowered) == 0);
  const auto at_1000 = default_max_connections();
  lowered.rlim_cur = 1;
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &lowered) == 0);
  const auto at_1 = default_max_connections();
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &saved) == 0);
  CHECK(at_1000 == 500);
  CHECK(at_1 == 1);
}
