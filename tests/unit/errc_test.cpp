// Error codes on the wire: every named errc reads back as itself, anything else as unknown.

#include <catch2/catch.hpp>

#include "runtime/errc.hpp"

using namespace capstan;

TEST_CASE("errc_from_value knows exactly the named codes", "[errc]") {
  int known = 0;
  while (known <= 255 && errc_from_value(static_cast<uint8_t>(known))) {
    const auto code = *errc_from_value(static_cast<uint8_t>(known));
    CHECK(static_cast<int>(code) == known);
    CHECK((to_string(code) != "UNKNOWN_SERVER_ERROR" || code == errc::unknown_server_error));
    ++known;
  }
  CHECK(known > static_cast<int>(errc::invalid_partitions));
  for (int v = known; v <= 255; ++v) CHECK_FALSE(errc_from_value(static_cast<uint8_t>(v)));
}
