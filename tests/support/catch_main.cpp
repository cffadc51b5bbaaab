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
