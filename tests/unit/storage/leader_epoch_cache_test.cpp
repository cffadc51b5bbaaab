#include <catch2/catch.hpp>

#include "runtime/storage/leader_epoch_cache.hpp"

using namespace capstan;

namespace {

leader_epoch_cache cache_of(std::vector<std::pair<int32_t, int64_t>> entries) {
  std::vector<epoch_entry> out;
  for (auto [e, s] : entries) out.push_back(epoch_entry{leader_epoch{e}, offset{s}});
  return leader_epoch_cache(out);
}

epoch_end end_of(int32_t e, int64_t o) { return epoch_end{leader_epoch{e}, offset{o}}; }

} // namespace

TEST_CASE("assigning a new epoch appends it, the same epoch again is a no-op",
          "[storage][epoch]") {
  leader_epoch_cache c;
  CHECK(c.assign(leader_epoch{1}, offset{0}));
  CHECK_FALSE(c.assign(leader_epoch{1}, offset{5}));
  CHECK(c.assign(leader_epoch{3}, offset{10}));
  REQUIRE(c.entries().size() == 2);
  CHECK(c.latest()->epoch == leader_epoch{3});
  CHECK(c.latest()->start == offset{10});
  CHECK_FALSE(c.assign(leader_epoch{-1}, offset{20}));
}

TEST_CASE("an entry that breaks monotonicity drops the entries it contradicts",
          "[storage][epoch]") {
  auto c = cache_of({{1, 0}, {2, 10}, {3, 20}});
  // Epoch 4 starting at 15: the suffix from 15 on no longer exists, so epochs 2 and 3 go
  // where they start at or after 15 (epoch 3) and epoch 2 stays.
  CHECK(c.assign(leader_epoch{4}, offset{15}));
  CHECK(c.entries() == std::vector<epoch_entry>{{leader_epoch{1}, offset{0}},
                                                {leader_epoch{2}, offset{10}},
                                                {leader_epoch{4}, offset{15}}});
  // The same epoch at an earlier start replaces its entry.
  CHECK(c.assign(leader_epoch{4}, offset{12}));
  CHECK(c.latest()->start == offset{12});
}

TEST_CASE("a checkpoint that is not monotonic is kept up to the first bad entry",
          "[storage][epoch]") {
  auto c = cache_of({{1, 0}, {3, 10}, {2, 20}, {5, 30}});
  CHECK(c.entries().size() == 2);
}

TEST_CASE("end offset for an epoch follows Kafka's endOffsetFor", "[storage][epoch]") {
  auto c = cache_of({{1, 0}, {3, 10}, {6, 25}});
  const offset leo{40};
  CHECK(c.end_offset_for(leader_epoch{6}, leo) == end_of(6, 40));  // latest: the LEO
  CHECK(c.end_offset_for(leader_epoch{3}, leo) == end_of(3, 25));  // next epoch's start
  CHECK(c.end_offset_for(leader_epoch{4}, leo) == end_of(3, 25));  // largest known <= 4
  CHECK(c.end_offset_for(leader_epoch{0}, leo) == end_of(0, 0));   // below every known epoch
  CHECK(c.end_offset_for(leader_epoch{7}, leo) == undefined_epoch_end);
  CHECK(c.end_offset_for(leader_epoch{-1}, leo) == undefined_epoch_end);
  CHECK(leader_epoch_cache{}.end_offset_for(leader_epoch{1}, leo) == undefined_epoch_end);
}

TEST_CASE("truncation from the end drops epochs that start at or past the new end",
          "[storage][epoch]") {
  auto c = cache_of({{1, 0}, {3, 10}, {6, 25}});
  CHECK_FALSE(c.truncate_from_end(offset{30}));
  CHECK(c.truncate_from_end(offset{25}));
  CHECK(c.latest()->epoch == leader_epoch{3});
  CHECK(c.truncate_from_end(offset{0}));
  CHECK(c.empty());
}

TEST_CASE("truncation from the start keeps the epoch covering the new start",
          "[storage][epoch]") {
  auto c = cache_of({{1, 0}, {3, 10}, {6, 25}});
  CHECK(c.truncate_from_start(offset{12}));
  CHECK(c.entries() == std::vector<epoch_entry>{{leader_epoch{3}, offset{12}},
                                                {leader_epoch{6}, offset{25}}});
  CHECK_FALSE(c.truncate_from_start(offset{12}));
  CHECK_FALSE(c.truncate_from_start(offset{5})); // before every entry: nothing to drop
}
