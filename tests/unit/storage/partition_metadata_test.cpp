#include <catch2/catch.hpp>

#include <fstream>

#include "runtime/storage/partition_metadata.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace capstan::test;

TEST_CASE("topic ids are written as Kafka's URL-safe base64 and read back", "[storage][partition-metadata]") {
  CHECK(to_base64_uuid(uuid_bytes{}) == "AAAAAAAAAAAAAAAAAAAAAA");
  uuid_bytes id{};
  for (size_t i = 0; i < id.size(); ++i) id[i] = static_cast<uint8_t>(0xf0 + i);
  const auto text = to_base64_uuid(id);
  CHECK(text.size() == 22);
  CHECK(text.find_first_of("+/=") == std::string::npos);
  auto back = parse_base64_uuid(text);
  REQUIRE(back);
  CHECK(*back == id);
  CHECK_FALSE(parse_base64_uuid("short"));
  CHECK_FALSE(parse_base64_uuid("AAAAAAAAAAAAAAAAAAAAA+"));
  // The last character carries 4 unused bits, which must be zero.
  CHECK_FALSE(parse_base64_uuid("AAAAAAAAAAAAAAAAAAAAAB"));
}

TEST_CASE("partition.metadata round trips in Kafka's format, missing reads as none, malformed is named",
          "[storage][partition-metadata]") {
  temp_dir dir;
  auto none = read_partition_metadata(dir.path());
  REQUIRE(none);
  CHECK_FALSE(*none);
  uuid_bytes id{};
  id[0] = 7;
  REQUIRE(write_partition_metadata(dir.path(), id));
  std::ifstream in(dir / partition_metadata_file);
  std::string l1, l2;
  std::getline(in, l1);
  std::getline(in, l2);
  CHECK(l1 == "version: 0");
  CHECK(l2 == "topic_id: " + to_base64_uuid(id));
  auto back = read_partition_metadata(dir.path());
  REQUIRE(back);
  REQUIRE(*back);
  CHECK(**back == id);
  for (const std::string bad : {"version: 1\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA\n", "version: 0\n",
                                "version: 0\ntopic_id: nope\n"}) {
    std::ofstream(dir / partition_metadata_file) << bad;
    auto r = read_partition_metadata(dir.path());
    CAPTURE(bad);
    REQUIRE_FALSE(r);
    CHECK(r.code() == errc::kafka_storage_error);
    CHECK(r.err().message.find(partition_metadata_file) != std::string::npos);
  }
}
