// node.incarnation: what a node's next process names as its previous incarnation.

#include <catch2/catch.hpp>

#include <fstream>

#include "runtime/cluster/incarnation_file.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace capstan::test;

TEST_CASE("a data dir's incarnation file is none until written, then the last one written",
          "[cluster][incarnation]") {
  temp_dir dir;
  auto none = read_incarnation_file(dir.path());
  REQUIRE(none);
  CHECK_FALSE(*none);

  uuid_bytes first{};
  first[0] = 1;
  first[15] = 0xff;
  REQUIRE(write_incarnation_file(dir.path(), first));
  uuid_bytes second{};
  second[7] = 42;
  REQUIRE(write_incarnation_file(dir.path(), second));
  auto read = read_incarnation_file(dir.path());
  REQUIRE(read);
  REQUIRE(*read);
  CHECK(**read == second);
}

TEST_CASE("a damaged incarnation file is a storage error naming it", "[cluster][incarnation]") {
  temp_dir dir;
  for (const char* text : {"", "version: 1\nincarnation_id: AAAAAAAAAAAAAAAAAAAAAA\n",
                           "version: 0\nincarnation_id: short\n", "version: 0\n"}) {
    INFO(text);
    std::ofstream(dir / incarnation_file_name) << text;
    auto read = read_incarnation_file(dir.path());
    REQUIRE_FALSE(read);
    CHECK(read.code() == errc::kafka_storage_error);
    CHECK(read.err().message.find(incarnation_file_name) != std::string::npos);
  }
}
