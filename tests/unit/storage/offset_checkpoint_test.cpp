#include <catch2/catch.hpp>

#include <fstream>

#include "runtime/storage/offset_checkpoint.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace capstan::test;

TEST_CASE("offset checkpoints round trip in Kafka's text format", "[storage][checkpoint]") {
  temp_dir dir;
  offset_map offsets{{{"orders", 0}, offset{42}}, {{"orders", 1}, offset{0}}, {{"a.b-c", 7}, offset{1}}};
  REQUIRE(write_offset_checkpoint(dir / "cp", offsets));
  auto back = read_offset_checkpoint(dir / "cp");
  REQUIRE(back);
  CHECK(*back == offsets);
  std::ifstream in(dir / "cp");
  std::string first;
  std::getline(in, first);
  CHECK(first == "0");
  CHECK_FALSE(std::filesystem::exists(dir / "cp.tmp"));
}

TEST_CASE("a missing checkpoint reads as empty, a malformed one is a named error",
          "[storage][checkpoint]") {
  temp_dir dir;
  auto missing = read_offset_checkpoint(dir / "none");
  REQUIRE(missing);
  CHECK(missing->empty());
  for (const std::string bad : {"1\n0\n", "0\nx\n", "0\n2\norders 0 5\n", "0\n1\norders -1 5\n",
                                "0\n1\norders 0 5 extra\n", "0\n1\norders 0\n"}) {
    std::ofstream(dir / "cp") << bad;
    auto r = read_offset_checkpoint(dir / "cp");
    CAPTURE(bad);
    REQUIRE_FALSE(r);
    CHECK(r.code() == errc::kafka_storage_error);
  }
}
