// The Catch2 entry point shared by every test executable.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

// ctest's Catch discovery keeps test names in a CMake list, so a ';' splits one test into two
// that each match nothing and pass without running. Linked into every tier with main().
TEST_CASE("no test name holds a semicolon, which would make ctest run nothing for it", "[meta]") {
  for (const auto& test : Catch::getRegistryHub().getTestCaseRegistry().getAllTests()) {
    INFO(test.name);
    CHECK(test.name.find(';') == std::string::npos);
  }
}

// Catch2 2.13's console reporter indents the wrapped lines of a failed test's name to just past
// its first ": "; past the 80-column width that indent leaves no room, and the reporter prints
// '-' forever instead of the failure, so ctest sees a timeout and no reason.
TEST_CASE("no test name has its first colon so far right that a failure report never ends",
          "[meta]") {
  for (const auto& test : Catch::getRegistryHub().getTestCaseRegistry().getAllTests()) {
    INFO(test.name);
    const auto colon = test.name.find(": ");
    CHECK((colon == std::string::npos || colon + 2 < 70));
  }
}
