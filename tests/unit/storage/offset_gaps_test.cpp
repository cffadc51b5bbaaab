#include <catch2/catch.hpp>

#include <fstream>

#include "runtime/storage/offset_gaps.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace capstan::test;

TEST_CASE("gaps merge when they touch and cover only what was recorded", "[storage][gaps]") {
  offset_gaps g;
  g.add(offset{10}, offset{20});
  g.add(offset{30}, offset{40});
  CHECK(g.covers(offset{10}, offset{20}));
  CHECK(g.covers(offset{12}, offset{15}));
  CHECK_FALSE(g.covers(offset{15}, offset{25}));
  CHECK_FALSE(g.covers(offset{9}, offset{11}));
  CHECK(g.covers(offset{50}, offset{50}));
  g.add(offset{20}, offset{30});
  CHECK(g.ranges().size() == 1);
  CHECK(g.covers(offset{10}, offset{40}));
  g.add(offset{5}, offset{12});
  CHECK(g.ranges() == std::map<offset, offset>{{offset{5}, offset{40}}});
  g.drop_below(offset{25});
  CHECK(g.ranges() == std::map<offset, offset>{{offset{25}, offset{40}}});
  g.drop_below(offset{40});
  CHECK(g.empty());
}

TEST_CASE("offset-gaps round trips, missing reads as none, malformed is named", "[storage][gaps]") {
  temp_dir dir;
  auto none = read_offset_gaps(dir.path());
  REQUIRE(none);
  CHECK(none->empty());
  offset_gaps g;
  g.add(offset{420}, offset{540});
  g.add(offset{600}, offset{999});
  REQUIRE(write_offset_gaps(dir.path(), g));
  auto back = read_offset_gaps(dir.path());
  REQUIRE(back);
  CHECK(*back == g);
  for (const std::string bad : {"1\n0\n", "0\n1\n5 5\n", "0\n2\n1 5\n4 8\n", "0\n1\n-1 5\n", "0\n2\n1 5\n"}) {
    std::ofstream(dir / offset_gaps_file) << bad;
    auto r = read_offset_gaps(dir.path());
    CAPTURE(bad);
    REQUIRE_FALSE(r);
    CHECK(r.code() == errc::kafka_storage_error);
  }
}
