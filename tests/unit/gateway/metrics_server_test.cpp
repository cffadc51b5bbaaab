#include "actors/gateway/metrics_server.hpp"

#include <string>

#include <catch2/catch.hpp>

#include "runtime/metrics/metrics_registry.hpp"
#include "tests/support/http_get.hpp"

using namespace capstan;

using capstan::test::http_exchange;

TEST_CASE("GET /metrics returns the registry in Prometheus text format", "[gateway][metrics]") {
  auto registry = std::make_shared<metrics_registry>();
  registry->counter("capstan_bytes_in_total", "Bytes in").inc(42);
  int refreshes = 0;
  auto server = metrics_server::start(registry, "127.0.0.1", 0, [&](metrics_registry& r) {
    ++refreshes;
    r.gauge("capstan_active_controller_count", "Active controllers").set(1);
  });
  REQUIRE(server.ok());
  auto& s = **server;
  REQUIRE(s.port() != 0);

  auto response = http_exchange(s.port(), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  CHECK(response.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(response.find("Content-Type: text/plain; version=0.0.4") != std::string::npos);
  CHECK(response.find("capstan_bytes_in_total 42\n") != std::string::npos);
  CHECK(response.find("capstan_active_controller_count 1\n") != std::string::npos);
  CHECK(refreshes == 1);
  const auto body = response.substr(response.find("\r\n\r\n") + 4);
  CHECK(response.find("Content-Length: " + std::to_string(body.size()) + "\r\n") !=
        std::string::npos);

  CHECK(http_exchange(s.port(), "GET /other HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 404", 0) == 0);
  CHECK(http_exchange(s.port(), "POST /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 405", 0) == 0);
  CHECK(http_exchange(s.port(), "garbage\r\n\r\n").rfind("HTTP/1.1 400", 0) == 0);
  CHECK(http_exchange(s.port(), std::string(9000, 'x')).rfind("HTTP/1.1 431", 0) == 0);
  // After bad requests the endpoint still serves.
  CHECK(http_exchange(s.port(), "GET /metrics?x=1 HTTP/1.0\r\n\r\n").rfind("HTTP/1.1 200", 0) == 0);
  s.stop();
  s.stop();
}

TEST_CASE("metrics endpoint on a port in use fails with NETWORK_EXCEPTION", "[gateway][metrics]") {
  auto registry = std::make_shared<metrics_registry>();
  auto first = metrics_server::start(registry, "127.0.0.1", 0);
  REQUIRE(first.ok());
  auto second = metrics_server::start(registry, "127.0.0.1", (*first)->port());
  REQUIRE_FALSE(second.ok());
  CHECK(second.code() == errc::network_exception);
}
