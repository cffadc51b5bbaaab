// Named loggers and the level setting.

#include <catch2/catch.hpp>
#include <spdlog/spdlog.h>

#include "runtime/actor/logging.hpp"

namespace capstan {

TEST_CASE("a module's logger is created once and shared", "[actor][logging]") {
  auto a = get_logger("logging-test");
  auto b = get_logger("logging-test");
  CHECK(a == b);
  CHECK(a->name() == "logging-test");
  CHECK(get_logger()->name() == "capstan");
}

TEST_CASE("the log level is set by name and unknown names are refused", "[actor][logging]") {
  auto before = spdlog::get_level();
  auto logger = get_logger("logging-level-test");
  REQUIRE(set_log_level("debug").ok());
  CHECK(logger->level() == spdlog::level::debug);
  CHECK(get_logger("logging-level-test-new")->level() == spdlog::level::debug);
  REQUIRE(set_log_level("warning").ok());
  CHECK(logger->level() == spdlog::level::warn);
  auto bad = set_log_level("loud");
  CHECK(bad.code() == errc::invalid_config);
  CHECK(logger->level() == spdlog::level::warn);
  REQUIRE(set_log_level("off").ok());
  CHECK(logger->level() == spdlog::level::off);
  spdlog::set_level(before);
}

} // namespace capstan
