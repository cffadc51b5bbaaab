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

// Catch2 2.x's console reporter indents a failed test's name after its first ": ", and loops
// forever printing lines of '-' when that indent leaves no room on its 79-column line (a colon
// at index 76 or later): a failure in such a test fills the disk instead of being reported.
TEST_CASE("no test name has its first colon too far right for Catch's console reporter", "[meta]") {
  for (const auto& test : Catch::getRegistryHub().getTestCaseRegistry().getAllTests()) {
    INFO(test.name);
    const auto colon = test.name.find(": ");
    CHECK((colon == std::string::npos || colon < 70));
  }
}
