#include <catch2/catch.hpp>

#include "runtime/cluster/partition_availability.hpp"

using namespace capstan;

namespace {

partition_assignment leaderless(std::vector<int32_t> isr) {
  partition_assignment p;
  p.replicas = {1, 2, 3};
  p.isr = std::move(isr);
  return p;
}

} // namespace

TEST_CASE("a partition with a leader is not offline, and its dead replicas are named",
          "[cluster][describe]") {
  auto p = leaderless({1, 2});
  p.leader = 1;
  CHECK(why_offline(p, {1, 2}, {}).empty());
  CHECK(offline_replicas(p, {1, 2}) == std::vector<int32_t>{3});
  CHECK(offline_replicas(p, {1, 2, 3}).empty());
}

TEST_CASE("a leaderless partition says what it waits for, by the controller's rules",
          "[cluster][describe]") {
  // Its last ISR member is dead: one ISR member back, or RF - min.insync.replicas + 1 = 2
  // replicas reporting their logs, brings it back.
  CHECK(why_offline(leaderless({3}), {1}, {{"min.insync.replicas", "2"}}) ==
        "no ISR member (3) is live; waits for one, or for 2 of replicas 1,2,3 to report their "
        "logs (live now: 1)");
  // Without the topic's own min.insync.replicas the broker's default applies, which the client
  // does not know.
  CHECK(why_offline(leaderless({3}), {}, {}) ==
        "no ISR member (3) is live; waits for one, or for RF - min.insync.replicas + 1 of replicas "
        "1,2,3 to report their logs (live now: none)");
  CHECK(why_offline(leaderless({3}), {1}, {{"unclean.leader.election.enable", "true"}}) ==
        "no ISR member (3) is live; unclean election takes the first live replica");
  CHECK(why_offline(leaderless({2, 3}), {1, 2}, {}) ==
        "ISR member 2 is live; the controller has not elected it yet");
  // A malformed override is no number to compute with.
  CHECK(why_offline(leaderless({3}), {}, {{"min.insync.replicas", "x"}}).find(
            "RF - min.insync.replicas + 1") != std::string::npos);
}

TEST_CASE("a partition whose last ISR member came back uncleanly says it waits for reports",
          "[cluster][describe]") {
  CHECK(why_offline(leaderless({}), {3}, {{"min.insync.replicas", "2"}}) ==
        "its last ISR member came back after an unclean shutdown or on a new data dir; waits for "
        "2 of replicas 1,2,3 to report their logs (live now: 3)");
}

TEST_CASE("a partition with wiped replicas says they do not count towards its recovery",
          "[cluster][describe]") {
  auto p = leaderless({});
  p.wiped = {3};
  CHECK(why_offline(p, {1, 3}, {{"min.insync.replicas", "2"}}) ==
        "its last ISR member came back after an unclean shutdown or on a new data dir; waits for "
        "2 of replicas 1,2 to report their logs (live now: 1); 3 came back on a new data dir and "
        "count only once back in the ISR");
}
