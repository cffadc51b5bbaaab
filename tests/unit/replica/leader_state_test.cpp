#include <catch2/catch.hpp>

#include "actors/replica/leader_state.hpp"

using namespace capstan;

namespace {

const node_id n1{1}, n2{2}, n3{3};

leader_config three_replicas(int32_t min_isr = 1, std::vector<node_id> isr = {n1, n2, n3}) {
  leader_config c;
  c.leader = n1;
  c.replicas = {n1, n2, n3};
  c.isr = std::move(isr);
  c.partition_epoch = 7;
  c.min_insync_replicas = min_isr;
  c.replica_lag_time_max_ms = 1000;
  return c;
}

} // namespace

TEST_CASE("a leader state alone in the ISR keeps the high watermark at its log end", "[replica][leader]") {
  leader_config c;
  c.leader = n1;
  c.replicas = {n1};
  c.isr = {n1};
  leader_state s(c, offset{5}, offset{3}, offset{5}, 0);
  CHECK(s.high_watermark() == offset{5});
  CHECK(s.on_leader_append(offset{9}));
  CHECK(s.high_watermark() == offset{9});
  CHECK_FALSE(s.on_leader_append(offset{9}));
}

TEST_CASE("the high watermark waits for every ISR member to report, then is their smallest LEO",
          "[replica][leader]") {
  leader_state s(three_replicas(), offset{10}, offset{4}, offset{10}, 0);
  CHECK(s.high_watermark() == offset{4});
  CHECK_FALSE(s.on_follower_fetch(n2, offset{8}, 1));
  CHECK(s.high_watermark() == offset{4});
  CHECK(s.on_follower_fetch(n3, offset{6}, 1));
  CHECK(s.high_watermark() == offset{6});
  CHECK(s.on_follower_fetch(n3, offset{10}, 2));
  CHECK(s.high_watermark() == offset{8});
}

TEST_CASE("a lagging report never moves the leader state's high watermark backwards", "[replica][leader]") {
  leader_state s(three_replicas(), offset{10}, offset{10}, offset{10}, 0);
  CHECK_FALSE(s.on_follower_fetch(n2, offset{3}, 1));
  CHECK_FALSE(s.on_follower_fetch(n3, offset{3}, 1));
  CHECK(s.high_watermark() == offset{10});
}

TEST_CASE("the high watermark does not advance while the ISR is below min.insync.replicas",
          "[replica][leader]") {
  leader_state s(three_replicas(2, {n1}), offset{0}, offset{0}, offset{0}, 0);
  CHECK_FALSE(s.enough_replicas());
  CHECK_FALSE(s.on_leader_append(offset{5}));
  CHECK(s.high_watermark() == offset{0});
  // n2 catches up and joins: the ISR reaches 2 and the HW moves.
  s.on_follower_fetch(n2, offset{5}, 1);
  auto p = s.propose_expand();
  REQUIRE(p);
  CHECK(p->isr == std::vector<node_id>{n1, n2});
  CHECK(p->partition_epoch == 7);
  CHECK(s.on_isr_committed(p->isr, 8));
  CHECK(s.enough_replicas());
  CHECK(s.high_watermark() == offset{5});
}

TEST_CASE("a follower that stops fetching leaves the ISR after replica.lag.time.max.ms",
          "[replica][leader]") {
  leader_state s(three_replicas(), offset{0}, offset{0}, offset{0}, 0);
  s.on_leader_append(offset{10});
  s.on_follower_fetch(n2, offset{10}, 100);
  s.on_follower_fetch(n3, offset{4}, 100);
  CHECK_FALSE(s.propose_shrink(1000)); // within the lag time
  s.on_follower_fetch(n2, offset{10}, 1050);
  auto p = s.propose_shrink(1101);
  REQUIRE(p);
  CHECK(p->isr == std::vector<node_id>{n1, n2});
  // While the change is in flight the old, larger ISR still holds the HW back.
  CHECK(s.proposal_in_flight());
  CHECK(s.high_watermark() == offset{4});
  CHECK_FALSE(s.propose_shrink(5000));
  CHECK(s.on_isr_committed(p->isr, 8));
  CHECK(s.high_watermark() == offset{10});
  CHECK(s.partition_epoch() == 8);
}

TEST_CASE("a follower fetching the leader's log end counts as caught up", "[replica][leader]") {
  leader_state s(three_replicas(), offset{10}, offset{10}, offset{10}, 0);
  s.on_follower_fetch(n2, offset{10}, 5000);
  s.on_follower_fetch(n3, offset{10}, 5000);
  CHECK_FALSE(s.propose_shrink(5500));
}

TEST_CASE("a follower that reached the previous fetch's log end caught up at that fetch",
          "[replica][leader]") {
  // Kafka's Replica.updateFetchState: the leader moved on between two fetches, but the second
  // fetch asks for at least the LEO of the first, so the follower was caught up then.
  leader_state s(three_replicas(), offset{10}, offset{10}, offset{10}, 0);
  s.on_follower_fetch(n3, offset{10}, 0);
  s.on_follower_fetch(n2, offset{10}, 900);    // LEO then: 10
  s.on_leader_append(offset{20});
  s.on_follower_fetch(n2, offset{15}, 1800);   // behind 20, but >= 10: caught up at 900
  CHECK(s.follower(n2)->last_caught_up_ms == 900);
  s.on_follower_fetch(n3, offset{20}, 1800);
  auto p = s.propose_shrink(1950); // n2 caught up 1050 ms ago
  REQUIRE(p);
  CHECK(p->isr == std::vector<node_id>{n1, n3});
}

TEST_CASE("a follower joins the ISR only once it reaches the HW and the epoch start",
          "[replica][leader]") {
  leader_state s(three_replicas(1, {n1, n2}), offset{20}, offset{12}, offset{20}, 0);
  s.on_follower_fetch(n2, offset{20}, 1);
  CHECK(s.high_watermark() == offset{20});
  s.on_follower_fetch(n3, offset{15}, 1);
  CHECK_FALSE(s.propose_expand()); // below the HW
  s.on_follower_fetch(n3, offset{20}, 2);
  auto p = s.propose_expand();
  REQUIRE(p);
  CHECK(p->isr == std::vector<node_id>{n1, n2, n3});
  // A pending addition counts for the HW at once (maximal ISR): it cannot move past n3.
  s.on_leader_append(offset{30});
  s.on_follower_fetch(n2, offset{30}, 3);
  CHECK(s.high_watermark() == offset{20});
}

TEST_CASE("a topic with fewer replicas than min.insync.replicas stays readable but refuses acks=all",
          "[replica][leader]") {
  leader_config c;
  c.leader = n1;
  c.replicas = {n1};
  c.isr = {n1};
  c.min_insync_replicas = 2;
  leader_state s(c, offset{0}, offset{0}, offset{0}, 0);
  CHECK_FALSE(s.enough_replicas());
  CHECK(s.on_leader_append(offset{3}));
  CHECK(s.high_watermark() == offset{3});
}

TEST_CASE("a refused proposal leaves the ISR and lets a later check propose again",
          "[replica][leader]") {
  leader_state s(three_replicas(), offset{0}, offset{0}, offset{0}, 0);
  auto p = s.propose_shrink(5000);
  REQUIRE(p);
  CHECK(p->isr == std::vector<node_id>{n1});
  s.on_proposal_failed();
  CHECK(s.isr().size() == 3);
  CHECK(s.propose_shrink(5000) == p);
}

TEST_CASE("an older partition epoch from the controller is ignored", "[replica][leader]") {
  leader_state s(three_replicas(), offset{0}, offset{0}, offset{0}, 0);
  CHECK_FALSE(s.on_isr_committed({n1}, 6));
  CHECK(s.isr().size() == 3);
  s.on_isr_committed({n2}, 9); // the leader is always a member
  CHECK(s.in_isr(n1));
  CHECK(s.in_isr(n2));
  CHECK_FALSE(s.in_isr(n3));
}

TEST_CASE("the controller's state at the partition epoch the leader has already keeps an ISR "
          "expansion in flight, so the HW never passes the joining follower",
          "[replica][leader]") {
  leader_state s(three_replicas(1, {n1, n2}), offset{20}, offset{20}, offset{20}, 0);
  s.on_follower_fetch(n2, offset{20}, 1);
  s.on_follower_fetch(n3, offset{20}, 1);
  REQUIRE(s.propose_expand());
  // The same state again (a full state the controller resends, or a duplicate): nothing changes,
  // and the expansion still holds the HW at n3's log end.
  CHECK_FALSE(s.on_isr_committed({n1, n2}, 7));
  CHECK(s.proposal_in_flight());
  s.on_leader_append(offset{30});
  s.on_follower_fetch(n2, offset{30}, 2);
  CHECK(s.high_watermark() == offset{20});
}

TEST_CASE("a replica added under the same leadership joins once caught up, a removed one is "
          "forgotten",
          "[replica][leader]") {
  const node_id n4{4};
  leader_state s(three_replicas(2, {n1, n2, n3}), offset{20}, offset{20}, offset{20}, 0);
  s.on_follower_fetch(n4, offset{20}, 1);
  CHECK_FALSE(s.propose_expand()); // not a replica yet: its fetch is ignored
  s.set_replicas({n1, n2, n4, n3});
  CHECK(s.replicas() == std::vector<node_id>{n1, n2, n4, n3});
  s.on_follower_fetch(n4, offset{10}, 2);
  CHECK_FALSE(s.propose_expand()); // behind the HW
  s.on_follower_fetch(n4, offset{20}, 3);
  auto p = s.propose_expand();
  REQUIRE(p);
  CHECK(p->isr == std::vector<node_id>{n1, n2, n3, n4});
  // The reassignment completes: n3 leaves the replicas and the ISR.
  s.on_isr_committed({n1, n2, n4}, 9);
  s.set_replicas({n1, n2, n4});
  CHECK(s.follower(n3) == nullptr);
  s.on_leader_append(offset{30});
  s.on_follower_fetch(n2, offset{30}, 4);
  s.on_follower_fetch(n4, offset{30}, 4);
  CHECK(s.high_watermark() == offset{30});
}

TEST_CASE("an ISR proposal names each member's incarnation as its latest fetch named it, and none "
          "when no fetch named one",
          "[replica][leader]") {
  incarnation_bytes first{}, second{};
  first.fill(1);
  second.fill(2);
  leader_state s(three_replicas(1, {n1, n2}), offset{20}, offset{20}, offset{20}, 0);
  s.on_follower_fetch(n2, offset{20}, 1, first);
  s.on_follower_fetch(n3, offset{20}, 1, first);
  auto p = s.propose_expand();
  REQUIRE(p);
  CHECK(p->isr == std::vector<node_id>{n1, n2, n3});
  CHECK(p->incarnations == std::vector<incarnation_bytes>{incarnation_bytes{}, first, first});
  s.on_proposal_failed();
  // Node 3 restarted: its new process's fetches name another incarnation, and so does the next
  // proposal (the controller refuses the old one).
  s.on_follower_fetch(n3, offset{20}, 2, second);
  p = s.propose_expand();
  REQUIRE(p);
  CHECK(p->incarnations == std::vector<incarnation_bytes>{incarnation_bytes{}, first, second});
  s.on_proposal_failed();

  leader_state unnamed(three_replicas(1, {n1, n2}), offset{20}, offset{20}, offset{20}, 0);
  unnamed.on_follower_fetch(n3, offset{20}, 1);
  p = unnamed.propose_expand();
  REQUIRE(p);
  CHECK(p->incarnations.empty());
}

TEST_CASE("a follower's new process is not caught up on the strength of its old process's fetch",
          "[replica][leader]") {
  incarnation_bytes old_process{}, new_process{};
  old_process.fill(1);
  new_process.fill(2);
  leader_state s(three_replicas(), offset{10}, offset{10}, offset{10}, 0);
  s.on_leader_append(offset{20});
  // The old process of node 3 fetched 15 while the leader's log end was 20.
  s.on_follower_fetch(n3, offset{15}, 900, old_process);
  s.on_leader_append(offset{30});
  // Its new process asks for 20: as the same process it would have caught up at 900, when the
  // log end was 20. A new process's log says nothing about then: it has not caught up since 0.
  s.on_follower_fetch(n3, offset{20}, 1500, new_process);
  s.on_follower_fetch(n2, offset{30}, 1500);
  auto p = s.propose_shrink(1500);
  REQUIRE(p);
  CHECK(p->isr == std::vector<node_id>{n1, n2});
}
