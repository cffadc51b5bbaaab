#include <catch2/catch.hpp>

#include "actors/replica/truncation.hpp"

using namespace capstan;

// The scenarios of KIP-101 and KIP-279, each as the follower's state and the leader's answer
// to OffsetsForLeaderEpoch for the follower's latest epoch.

namespace {

leader_epoch_cache cache_of(std::vector<std::pair<int32_t, int64_t>> entries) {
  leader_epoch_cache c;
  for (auto [e, s] : entries) c.assign(leader_epoch{e}, offset{s});
  return c;
}

// The follower's side of the exchange: it looks up the leader's answered epoch in its own cache.
truncation_decision decide(const leader_epoch_cache& mine, offset log_end, offset hw, epoch_end leader) {
  return decide_truncation(mine.end_offset_for(leader.epoch, log_end), log_end, hw, leader);
}

} // namespace

TEST_CASE("a follower with the leader's epoch truncates to the leader's end of it",
          "[replica][truncation]") {
  // KIP-101 scenario 1: the follower had appended m2 (offset 1) in epoch 0 that the old leader
  // never committed; the new leader (itself a follower before) ended epoch 0 at offset 1.
  auto mine = cache_of({{0, 0}});
  auto d = decide(mine, offset{2}, offset{1}, epoch_end{leader_epoch{0}, offset{1}});
  CHECK(d == truncation_decision{offset{1}, true});
}

TEST_CASE("a follower does not truncate below the leader's end of the common epoch even under "
          "its high watermark", "[replica][truncation]") {
  // KIP-101 scenario 1 again, the case the old rule got wrong: the follower's HW is 1 but the
  // leader holds both records of epoch 0. Truncating to the HW would drop a committed record.
  auto mine = cache_of({{0, 0}});
  auto d = decide(mine, offset{2}, offset{1}, epoch_end{leader_epoch{0}, offset{2}});
  CHECK(d == truncation_decision{offset{2}, true});
}

TEST_CASE("replicas that diverged in an epoch the follower alone saw truncate to the common one",
          "[replica][truncation]") {
  // KIP-101 scenario 2: both replicas restart; the follower wrote offsets 1.. in epoch 1 that
  // the leader never saw. Asked for epoch 1, the leader answers (0, 1): the largest epoch it
  // knows <= 1 is 0, which ends at 1 on the leader.
  auto mine = cache_of({{0, 0}, {1, 1}});
  auto d = decide(mine, offset{3}, offset{1}, epoch_end{leader_epoch{0}, offset{1}});
  // The follower knows epoch 0 too, ending (for it) at 1: truncate to 1, done.
  CHECK(d == truncation_decision{offset{1}, true});
}

TEST_CASE("a follower that does not know the leader's answered epoch truncates in steps",
          "[replica][truncation]") {
  // KIP-279: the follower has epochs 1 and 3; the leader answers (2, 15) for epoch 3. The
  // follower's largest epoch <= 2 is 1, ending (for it) at 10: truncate to 10 and ask again.
  auto mine = cache_of({{1, 0}, {3, 10}});
  auto d = decide(mine, offset{20}, offset{5}, epoch_end{leader_epoch{2}, offset{15}});
  CHECK(d == truncation_decision{offset{10}, false});
}

TEST_CASE("a follower behind the leader's end keeps its whole log", "[replica][truncation]") {
  auto mine = cache_of({{4, 0}});
  auto d = decide(mine, offset{7}, offset{7}, epoch_end{leader_epoch{4}, offset{30}});
  CHECK(d == truncation_decision{offset{7}, true});
}

TEST_CASE("a leader with no epoch information leaves the high watermark rule",
          "[replica][truncation]") {
  auto mine = cache_of({{2, 0}});
  auto d = decide(mine, offset{9}, offset{4}, undefined_epoch_end);
  CHECK(d == truncation_decision{offset{4}, true});
}

TEST_CASE("a follower with no epoch at or below the answered one takes the leader's end",
          "[replica][truncation]") {
  auto mine = cache_of({{5, 3}});
  auto d = decide(mine, offset{9}, offset{3}, epoch_end{leader_epoch{2}, offset{6}});
  // Its own answer for epoch 2 is (2, 3): below every entry it knows, so the epoch matches and
  // the smaller end wins.
  CHECK(d == truncation_decision{offset{3}, true});
}
