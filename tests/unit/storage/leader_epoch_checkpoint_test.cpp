#include <catch2/catch.hpp>

#include "runtime/storage/leader_epoch_checkpoint.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;

TEST_CASE("a leader-epoch-checkpoint round trips in Kafka's format", "[storage][epoch]") {
  std::vector<epoch_entry> entries{{leader_epoch{0}, offset{0}}, {leader_epoch{3}, offset{120}}};
  auto text = format_leader_epoch_checkpoint(entries);
  CHECK(text == "0\n2\n0 0\n3 120\n");
  auto back = parse_leader_epoch_checkpoint(text);
  REQUIRE(back);
  CHECK(*back == entries);

  test::temp_dir dir{"epochs"};
  auto file = dir / leader_epoch_checkpoint_name;
  auto missing = read_leader_epoch_checkpoint(file);
  REQUIRE(missing);
  CHECK(missing->empty());
  REQUIRE(write_leader_epoch_checkpoint(file, entries));
  auto read = read_leader_epoch_checkpoint(file);
  REQUIRE(read);
  CHECK(*read == entries);
}

TEST_CASE("a damaged leader-epoch-checkpoint is a storage error naming the line",
          "[storage][epoch]") {
  for (std::string text : {"", "1\n0\n", "0\nx\n", "0\n2\n0 0\n", "0\n1\n5\n", "0\n1\n-1 0\n",
                           "0\n2\n3 10\n2 20\n", "0\n2\n1 10\n2 10\n", "0\n1\n1 10 7\n"}) {
    INFO(text);
    auto r = parse_leader_epoch_checkpoint(text);
    REQUIRE_FALSE(r);
    CHECK(r.code() == errc::kafka_storage_error);
    CHECK(r.err().message.find("line") != std::string::npos);
  }
}
