// Kafka's election rules: the preferred replica if it is live and in the ISR, else the first live
// ISR member in replica order, else (only with unclean election) the first live replica, else
// none; and the epochs a resulting change carries.

#include <catch2/catch.hpp>

#include <set>

#include "actors/controller/metadata/leader_election.hpp"
#include "actors/controller/metadata/partition_change.hpp"
#include "tests/unit/controller/metadata/image_builder.hpp"

using namespace capstan;
using namespace capstan::controller;
using namespace capstan::controller::test;

namespace {

liveness live(std::initializer_list<int32_t> nodes) {
  std::set<node_id> alive;
  for (auto n : nodes) alive.insert(node_id{n});
  return [alive](node_id n) { return alive.count(n) != 0; };
}

} // namespace

TEST_CASE("the preferred replica leads when it is live and in the ISR", "[controller][election]") {
  CHECK(elect_leader(ids({1, 2, 3}), ids({3, 2, 1}), live({1, 2, 3}), false) ==
        election_result{node_id{1}, false});
}

TEST_CASE("else the first live ISR member in replica order leads", "[controller][election]") {
  // ISR order says 3 first; Kafka walks the replicas, so 2 wins.
  CHECK(elect_leader(ids({1, 2, 3}), ids({3, 2}), live({2, 3}), false) ==
        election_result{node_id{2}, false});
  CHECK(elect_leader(ids({1, 2, 3}), ids({1, 3}), live({2, 3}), false) ==
        election_result{node_id{3}, false});
  // Live but outside the ISR does not count.
  CHECK(elect_leader(ids({1, 2, 3}), ids({1, 3}), live({2}), false) == election_result{});
}

TEST_CASE("with no live ISR member the partition goes offline unless unclean election is on",
          "[controller][election]") {
  CHECK(elect_leader(ids({1, 2, 3}), ids({1}), live({2, 3}), false) ==
        election_result{no_leader, false});
  CHECK(elect_leader(ids({1, 2, 3}), ids({1}), live({3, 2}), true) ==
        election_result{node_id{2}, true});
  CHECK(elect_leader(ids({1, 2, 3}), ids({1}), live({}), true) == election_result{no_leader, false});
  // A replica back on an empty disk only when no other is live.
  CHECK(elect_leader(ids({1, 2, 3}), ids({1}), live({2, 3}), true, ids({2})) ==
        election_result{node_id{3}, true});
  CHECK(elect_leader(ids({1, 2, 3}), ids({1}), live({2}), true, ids({2})) ==
        election_result{node_id{2}, true});
}

TEST_CASE("a topic's unclean.leader.election.enable overrides the broker default",
          "[controller][election]") {
  topic_image t;
  CHECK_FALSE(unclean_leader_election_enabled(t, false));
  CHECK(unclean_leader_election_enabled(t, true));
  t.configs["unclean.leader.election.enable"] = "true";
  CHECK(unclean_leader_election_enabled(t, false));
  t.configs["unclean.leader.election.enable"] = "FALSE";
  CHECK_FALSE(unclean_leader_election_enabled(t, true));
}

TEST_CASE("a change bumps the partition epoch always and the leader epoch on a new leader",
          "[controller][election]") {
  const auto id = make_topic_id(1);
  partition_state p{ids({1, 2, 3}), ids({1, 2, 3}), node_id{1}, leader_epoch{4}, partition_epoch{7}, {}, {}};
  CHECK_FALSE(make_partition_change(id, partition_id{0}, p, node_id{1}, ids({1, 2, 3})));

  auto isr_only = make_partition_change(id, partition_id{0}, p, node_id{1}, ids({1, 2}));
  REQUIRE(isr_only);
  CHECK_FALSE(isr_only->leader);
  CHECK(isr_only->isr == ids({1, 2}));
  CHECK(isr_only->leader_epoch == leader_epoch{4});
  CHECK(isr_only->partition_epoch == partition_epoch{8});

  auto leader_only = make_partition_change(id, partition_id{0}, p, node_id{2}, ids({1, 2, 3}));
  REQUIRE(leader_only);
  CHECK(leader_only->leader == node_id{2});
  CHECK_FALSE(leader_only->isr);
  CHECK(leader_only->leader_epoch == leader_epoch{5});
  CHECK(leader_only->partition_epoch == partition_epoch{8});

  auto offline = make_partition_change(id, partition_id{0}, p, no_leader, ids({1}));
  REQUIRE(offline);
  CHECK(offline->leader == no_leader);
  CHECK(offline->leader_epoch == leader_epoch{5});
}

TEST_CASE("leadership_change keeps a live leader and only drops the leaving node from the ISR",
          "[controller][election]") {
  const auto image = image_builder()
                       .nodes({1, 2, 3})
                       .topic("orders", 1, {ids({1, 2, 3})})
                       .image();
  const auto& t = *image.topic_by_name("orders");
  std::vector<std::string> warnings;
  auto change = leadership_change(t, partition_id{0}, live({1, 3}), node_id{2}, false, warnings);
  REQUIRE(change);
  CHECK_FALSE(change->leader);
  CHECK(change->isr == ids({1, 3}));
  CHECK(change->leader_epoch == leader_epoch{0});
  CHECK(change->partition_epoch == partition_epoch{1});
  CHECK(warnings.empty());
  CHECK_FALSE(leadership_change(t, partition_id{0}, live({1, 2, 3}), std::nullopt, false, warnings));
}
