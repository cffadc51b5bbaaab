#include <catch2/catch.hpp>

#include "actors/replica/fetch_states.hpp"

using namespace capstan;

namespace {

const topic_partition a{"orders", 0};
const topic_partition b{"orders", 1};
const leader_epoch e3{3}, e4{4};
// Replica actors' ids: the partition's own, and the offline one the node swaps in for it.
constexpr uint64_t replica = 7, offline_replica = 8;

} // namespace

TEST_CASE("a follower with epoch information truncates before it fetches", "[replica][fetcher]") {
  fetch_states s;
  s.add(a, e3, offset{10}, true);
  s.add(b, e3, offset{0}, false);
  CHECK(s.ready(fetch_phase::truncating, 0) == std::vector<topic_partition>{a});
  CHECK(s.ready(fetch_phase::fetching, 0) == std::vector<topic_partition>{b});
  s.truncated(a, e3, offset{7}, false);
  CHECK(s.find(a)->fetch_offset == offset{7});
  CHECK(s.find(a)->phase == fetch_phase::truncating);
  s.truncated(a, e3, offset{6}, true);
  CHECK(s.ready(fetch_phase::fetching, 0) == std::vector<topic_partition>{a, b});
}

TEST_CASE("answers for an epoch the fetcher no longer follows change nothing",
          "[replica][fetcher]") {
  fetch_states s;
  s.add(a, e3, offset{10}, false);
  s.add(a, e4, offset{10}, true); // a newer LeaderAndIsr re-added it
  s.advanced(a, e3, offset{50});
  s.truncated(a, e3, offset{2}, true);
  s.delay(a, e3, 1000);
  CHECK(s.find(a)->fetch_offset == offset{10});
  CHECK(s.find(a)->phase == fetch_phase::truncating);
  CHECK(s.find(a)->delayed_until == 0);
  CHECK_FALSE(s.remove(a, e3));
  CHECK(s.remove(a, e4));
  CHECK(s.empty());
}

TEST_CASE("a delayed partition waits while the others go on", "[replica][fetcher]") {
  fetch_states s;
  s.add(a, e3, offset{0}, false);
  s.add(b, e3, offset{0}, false);
  s.delay(a, e3, 500);
  CHECK(s.ready(fetch_phase::fetching, 100) == std::vector<topic_partition>{b});
  CHECK(s.next_wakeup(100) == 500);
  CHECK(s.ready(fetch_phase::fetching, 500) == std::vector<topic_partition>{a, b});
  CHECK_FALSE(s.next_wakeup(500));
  s.delay_all(900);
  CHECK(s.ready(fetch_phase::fetching, 800).empty());
  s.needs_truncation(b, e3);
  CHECK(s.ready(fetch_phase::truncating, 900) == std::vector<topic_partition>{b});
}

TEST_CASE("an empty answer is news to the replica unless the same actor took the same watermark "
          "and log start",
          "[replica][fetcher]") {
  fetch_states s;
  s.add(a, e3, offset{10}, false);
  auto nothing_new = [&](int64_t hw, int64_t start, uint64_t taker = replica) {
    return fetch_states::nothing_new(*s.find(a), offset{hw}, offset{start}, taker);
  };
  // Nothing taken yet under this epoch: everything is news.
  CHECK_FALSE(nothing_new(10, 0));
  s.handed(a, e3, handed_over{offset{12}, offset{10}, offset{0}, replica});
  CHECK(s.find(a)->fetch_offset == offset{12});
  CHECK(nothing_new(10, 0));
  // A higher watermark, a moved log start, another actor on the route (the partition went
  // offline under the same epoch): news.
  CHECK_FALSE(nothing_new(12, 0));
  CHECK_FALSE(nothing_new(10, 5));
  CHECK_FALSE(nothing_new(10, 0, offline_replica));

  // A restart at the leader's log start, a truncation (asked for, half done or done), a new
  // epoch, or an answer for an old epoch: nothing is assumed taken.
  s.advanced(a, e3, offset{20});
  CHECK_FALSE(nothing_new(10, 0));
  s.handed(a, e3, handed_over{offset{20}, offset{20}, offset{0}, replica});
  s.needs_truncation(a, e3);
  CHECK_FALSE(nothing_new(20, 0));
  s.handed(a, e3, handed_over{offset{20}, offset{20}, offset{0}, replica});
  s.truncated(a, e3, offset{20}, false);
  CHECK_FALSE(nothing_new(20, 0));
  s.handed(a, e3, handed_over{offset{20}, offset{20}, offset{0}, replica});
  s.truncated(a, e3, offset{20}, true);
  CHECK_FALSE(nothing_new(20, 0));
  s.handed(a, e3, handed_over{offset{20}, offset{20}, offset{0}, replica});
  s.add(a, e4, offset{20}, true);
  s.handed(a, e3, handed_over{offset{20}, offset{20}, offset{0}, replica});
  CHECK_FALSE(nothing_new(20, 0));
}
