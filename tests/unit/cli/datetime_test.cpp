// The date-times of groups reset-offsets --to-datetime, read as Kafka's tools read them.

#include <catch2/catch.hpp>

#include <cstdlib>

#include "runtime/datetime.hpp"

using namespace capstan;

namespace {

int64_t instant(const char* text) {
  auto r = parse_datetime(text);
  INFO(text << ": " << (r ? std::string() : r.err().to_string()));
  REQUIRE(r);
  return *r;
}

} // namespace

TEST_CASE("a date-time in UTC, with an offset or with milliseconds reads as the instant it names",
          "[unit][cli]") {
  CHECK(instant("1970-01-01T00:00:00Z") == 0);
  CHECK(instant("2026-12-05T10:30:00.250Z") == 1796466600250);
  CHECK(instant("2026-12-05T12:30:00+02:00") == 1796466600000);
  CHECK(instant("2026-12-05T05:30:00-0500") == 1796466600000);
  CHECK(instant("2024-02-29T00:00:00Z") == 1709164800000);
}

TEST_CASE("a date-time without a zone is local time, as in Kafka's tools", "[unit][cli]") {
  const char* before = std::getenv("TZ");
  const std::string saved = before ? before : "";
  setenv("TZ", "UTC+3", 1); // POSIX: three hours west of UTC
  tzset();
  CHECK(instant("1970-01-01T00:00:00") == 3 * 3600 * 1000);
  if (before)
    setenv("TZ", saved.c_str(), 1);
  else
    unsetenv("TZ");
  tzset();
}

TEST_CASE("anything else is INVALID_REQUEST naming the form", "[unit][cli]") {
  for (const char* bad : {"", "2026-12-05", "2026-12-05 10:30:00", "2026-13-01T00:00:00Z", "2025-02-29T00:00:00Z",
                          "2026-12-05T24:00:00Z", "2026-12-05T10:30:00.5Z", "2026-12-05T10:30:00Zjunk",
                          "2026-12-05T10:30:00+2", "yesterday"}) {
    INFO(bad);
    auto r = parse_datetime(bad);
    REQUIRE_FALSE(r);
    CHECK(r.code() == errc::invalid_request);
    CHECK(r.err().message.find("YYYY-MM-DDTHH:mm:SS") != std::string::npos);
  }
}
