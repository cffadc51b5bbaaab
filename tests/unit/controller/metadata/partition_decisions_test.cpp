// AlterPartition from leaders (every refusal by name, the epochs of an accepted change, the answer
// from the committed state) and preferred leader election.

#include <catch2/catch.hpp>

#include "actors/controller/metadata/broker_decisions.hpp"
#include "actors/controller/metadata/partition_decisions.hpp"
#include "tests/unit/controller/metadata/image_builder.hpp"

using namespace capstan;
using namespace capstan::controller;
using namespace capstan::controller::test;

namespace {

const topic_id orders = make_topic_id(1);

// Nodes 1-4 unfenced; orders-0 [1,2,3] and orders-1 [2,3,1], ISR = replicas, leaders 1 and 2.
metadata_image cluster() {
  return image_builder()
    .nodes({1, 2, 3, 4})
    .topic("orders", 1, {ids({1, 2, 3}), ids({2, 3, 1})})
    .image();
}

alter_partition_msg shrink(int32_t sender, std::vector<node_id> isr, int32_t le = 0, int32_t pe = 0,
                           int32_t p = 0) {
  return alter_partition_msg{
    node_id{sender},
    {alter_partition_item{topic_partition{"orders", p}, orders, leader_epoch{le}, pe, std::move(isr)}}};
}

errc outcome(const metadata_image& image, const alter_partition_msg& request) {
  auto d = alter_partition(image, request);
  REQUIRE(d.outcomes.size() == request.partitions.size());
  if (d.outcomes[0].code != errc::none) CHECK(d.changes.records.empty());
  return d.outcomes[0].code;
}

} // namespace

TEST_CASE("an accepted AlterPartition bumps the partition epoch and keeps the leader epoch",
          "[controller][alter_partition]") {
  const auto image = cluster();
  auto d = alter_partition(image, shrink(1, ids({1, 3})));
  REQUIRE(d.outcomes.size() == 1);
  CHECK(d.outcomes[0].code == errc::none);
  REQUIRE(d.changes.records.size() == 1);
  const auto& change = std::get<partition_change_record>(d.changes.records[0]);
  CHECK_FALSE(change.leader);
  CHECK(change.isr == ids({1, 3}));
  CHECK(change.leader_epoch == leader_epoch{0});
  CHECK(change.partition_epoch == partition_epoch{1});

  const auto after = applied(image, d.changes.records);
  const auto answer = answer_alter_partition(after, shrink(1, ids({1, 3})), d.outcomes).partitions;
  REQUIRE(answer.size() == 1);
  CHECK(answer[0].error == errc::none);
  CHECK(answer[0].tp == topic_partition{"orders", 0});
  CHECK(answer[0].leader == node_id{1});
  CHECK(answer[0].epoch == leader_epoch{0});
  CHECK(answer[0].isr == ids({1, 3}));
  CHECK(answer[0].partition_epoch == 1);

  // Growing it back builds on partition epoch 1.
  auto grow = alter_partition(after, shrink(1, ids({1, 3, 2}), 0, 1));
  CHECK(grow.outcomes[0].code == errc::none);
  CHECK(std::get<partition_change_record>(grow.changes.records[0]).partition_epoch ==
        partition_epoch{2});
}

TEST_CASE("an AlterPartition with the ISR as it is proposes nothing and answers the state",
          "[controller][alter_partition]") {
  const auto image = cluster();
  auto d = alter_partition(image, shrink(1, ids({1, 2, 3})));
  CHECK(d.outcomes[0].code == errc::none);
  CHECK(d.changes.records.empty());
  auto answer = answer_alter_partition(image, shrink(1, ids({1, 2, 3})), d.outcomes).partitions;
  CHECK(answer[0].isr == ids({1, 2, 3}));
}

TEST_CASE("AlterPartition refusals are named", "[controller][alter_partition]") {
  auto image = cluster();
  // orders-0 moves to leader epoch 1, partition epoch 1 (leader 2) and back (leader epoch 2,
  // partition epoch 2, leader 1), so stale and future epochs both exist.
  image = applied(image, {partition_change_record{orders, partition_id{0}, node_id{2},
                                                  std::nullopt, std::nullopt, leader_epoch{1},
                                                  partition_epoch{1}, {}},
                          partition_change_record{orders, partition_id{0}, node_id{1},
                                                  std::nullopt, std::nullopt, leader_epoch{2},
                                                  partition_epoch{2}, {}}});
  image = applied(image, fence_broker(image, node_id{4}, broker_epoch{4}, {})->records);

  CHECK(outcome(image, shrink(1, ids({1, 2}), 2, 2)) == errc::none);
  CHECK(outcome(image, shrink(1, ids({1, 2}), 3, 2)) == errc::not_controller);
  CHECK(outcome(image, shrink(1, ids({1, 2}), 2, 3)) == errc::not_controller);
  CHECK(outcome(image, shrink(1, ids({1, 2}), 1, 2)) == errc::fenced_leader_epoch);
  CHECK(outcome(image, shrink(2, ids({2, 3}), 2, 2)) == errc::not_leader_or_follower);
  CHECK(outcome(image, shrink(1, ids({1, 2}), 2, 1)) == errc::invalid_update_version);
  CHECK(outcome(image, shrink(1, ids({2, 3}), 2, 2)) == errc::invalid_request);    // no leader
  CHECK(outcome(image, shrink(1, ids({1, 4}), 2, 2)) == errc::invalid_request);    // not a replica
  CHECK(outcome(image, shrink(1, ids({1, 1}), 2, 2)) == errc::invalid_request);    // twice
  CHECK(outcome(image, shrink(1, ids({1, 2}), 0, 0, 7)) == errc::unknown_topic_or_partition);

  auto unknown = shrink(1, ids({1}), 2, 2);
  unknown.partitions[0].id = make_topic_id(77);
  CHECK(outcome(image, unknown) == errc::unknown_topic_or_partition);
  auto misnamed = shrink(1, ids({1}), 2, 2);
  misnamed.partitions[0].tp.first = "payments";
  CHECK(outcome(image, misnamed) == errc::inconsistent_topic_id);
  auto by_name = shrink(1, ids({1}), 2, 2);
  by_name.partitions[0].id = topic_id{};
  CHECK(outcome(image, by_name) == errc::none);

  auto twice = shrink(1, ids({1, 2}), 2, 2);
  twice.partitions.push_back(twice.partitions[0]);
  auto d = alter_partition(image, twice);
  CHECK(d.outcomes[0].code == errc::none);
  CHECK(d.outcomes[1].code == errc::invalid_request);
  CHECK(d.changes.records.size() == 1);

  // Node 3 fenced: it may not join the ISR. (orders-1 is led by 2.)
  image = applied(image, fence_broker(image, node_id{3}, broker_epoch{3}, {})->records);
  const auto& p1 = *image.partition(orders, partition_id{1});
  auto ineligible = outcome(image, shrink(2, ids({2, 3}), p1.leader_epoch.value(),
                                          p1.partition_epoch.value(), 1));
  CHECK(ineligible == errc::ineligible_replica);
}

TEST_CASE("the answer reports the committed state, also when another change landed first",
          "[controller][alter_partition]") {
  const auto image = cluster();
  const auto request = shrink(1, ids({1, 3}));
  auto d = alter_partition(image, request);
  // Before the change commits, node 3 is fenced: the committed ISR is [1].
  auto fenced = fence_broker(applied(image, d.changes.records), node_id{3}, broker_epoch{3}, {});
  const auto committed = applied(applied(image, d.changes.records), fenced->records);
  auto answer = answer_alter_partition(committed, request, d.outcomes).partitions;
  CHECK(answer[0].error == errc::none);
  CHECK(answer[0].isr == ids({1}));
  CHECK(answer[0].partition_epoch == 2);

  auto gone = committed;
  REQUIRE(gone.apply(remove_topic_record{orders}).ok());
  const auto lost = answer_alter_partition(gone, request, d.outcomes).partitions[0];
  CHECK(lost.error == errc::unknown_topic_or_partition);
  CHECK(lost.leader == no_leader);
}

TEST_CASE("preferred leader election moves leadership back to the first replica",
          "[controller][preferred]") {
  auto image = cluster();
  // orders-0 loses node 1 and gets it back into the ISR: leader 2, preferred 1.
  image = applied(image, fence_broker(image, node_id{1}, broker_epoch{1}, {})->records);
  image = applied(image, unfence_broker(image, node_id{1}, broker_epoch{1}, {})->records);
  const auto& p0 = *image.partition(orders, partition_id{0});
  REQUIRE(p0.leader == node_id{2});
  auto grow = alter_partition(image, shrink(2, ids({2, 3, 1}), p0.leader_epoch.value(),
                                            p0.partition_epoch.value()));
  REQUIRE(grow.outcomes[0].code == errc::none);
  image = applied(image, grow.changes.records);

  auto all = elect_preferred_leaders(image, std::nullopt);
  REQUIRE(all.changes.records.size() == 1);
  const auto& change = std::get<partition_change_record>(all.changes.records[0]);
  CHECK(change.partition == partition_id{0});
  CHECK(change.leader == node_id{1});
  CHECK_FALSE(change.isr);
  CHECK(change.leader_epoch == next(image.partition(orders, partition_id{0})->leader_epoch));
  REQUIRE(all.results.size() == 2);
  CHECK(all.results[0].outcome.code == errc::none);
  CHECK(all.results[1].outcome.code == errc::election_not_needed);
  CHECK(applied(image, all.changes.records).partition(orders, partition_id{0})->leader ==
        node_id{1});
}

TEST_CASE("preferred leader election refusals are named", "[controller][preferred]") {
  auto image = cluster();
  image = applied(image, fence_broker(image, node_id{1}, broker_epoch{1}, {})->records);
  // orders-0: preferred 1 is fenced. orders-1: preferred 2 leads.
  auto some = elect_preferred_leaders(
    image, std::vector<partition_ref>{{"orders", partition_id{0}},
                                      {"orders", partition_id{1}},
                                      {"orders", partition_id{5}},
                                      {"nope", partition_id{0}}});
  CHECK(some.changes.records.empty());
  REQUIRE(some.results.size() == 4);
  CHECK(some.results[0].outcome.code == errc::preferred_leader_not_available);
  CHECK(some.results[0].outcome.message.find("fenced") != std::string::npos);
  CHECK(some.results[1].outcome.code == errc::election_not_needed);
  CHECK(some.results[2].outcome.code == errc::unknown_topic_or_partition);
  CHECK(some.results[3].outcome.code == errc::unknown_topic_or_partition);

  // Unfenced again but not back in the ISR: still not available.
  image = applied(image, unfence_broker(image, node_id{1}, broker_epoch{1}, {})->records);
  auto again = elect_preferred_leaders(image, std::vector<partition_ref>{{"orders", partition_id{0}}});
  CHECK(again.results[0].outcome.code == errc::preferred_leader_not_available);
  CHECK(again.results[0].outcome.message.find("not in the ISR") != std::string::npos);
}

TEST_CASE("the periodic rebalance picks a node's partitions once their imbalance passes the "
          "percentage",
          "[controller][preferred]") {
  // Node 1 is preferred for four partitions; another replica leads one of them (25%).
  auto image = image_builder()
                   .nodes({1, 2, 3})
                   .topic("orders", 1, {ids({1, 2}), ids({1, 3}), ids({1, 2}), ids({1, 3})})
                   .image();
  image =
      applied(image, {partition_change_record{orders, partition_id{2}, node_id{2}, std::nullopt,
                                              std::nullopt, leader_epoch{1}, partition_epoch{1}, {}}});
  CHECK(imbalanced_partitions(image, 25).empty());
  auto picked = imbalanced_partitions(image, 10);
  REQUIRE(picked.size() == 1);
  CHECK(picked[0] == partition_ref{"orders", partition_id{2}});
  CHECK(imbalanced_partitions(image, 0) == picked);
  // A fenced preferred replica is no node to rebalance towards.
  image = applied(image, fence_broker(image, node_id{1}, broker_epoch{1}, {})->records);
  CHECK(imbalanced_partitions(image, 0).empty());
}

TEST_CASE("an ISR member joining on fetches of an earlier process of its node is refused, as "
          "KIP-903's broker epochs in AlterPartition",
          "[controller][alter_partition]") {
  // orders-0 [1,2,3] with ISR [1,2]: node 3 catches up and the leader proposes it.
  const auto base = cluster();
  auto shrunk = alter_partition(base, shrink(1, ids({1, 2})));
  REQUIRE(shrunk.outcomes[0].code == errc::none);
  const auto image = applied(base, shrunk.changes.records);
  const auto current = image.broker(node_id{3})->incarnation;
  const auto earlier = make_incarnation(77);
  auto join = [&](incarnation_id named) {
    auto m = shrink(1, ids({1, 2, 3}), 0, 1);
    m.partitions[0].new_isr_incarnations = {incarnation_id{}, current, named};
    return m;
  };

  auto refused = alter_partition(image, join(earlier));
  REQUIRE(refused.outcomes.size() == 1);
  CHECK(refused.outcomes[0].code == errc::ineligible_replica);
  CHECK(refused.outcomes[0].message.find("earlier process") != std::string::npos);
  CHECK(refused.changes.records.empty());

  CHECK(outcome(image, join(current)) == errc::none);
  // Not named (a leader that does not know it): as before.
  CHECK(outcome(image, join(incarnation_id{})) == errc::none);
  // A member already in the ISR keeps its place whatever the leader last saw of it.
  auto shrink_named = shrink(1, ids({1, 2}), 0, 1);
  shrink_named.partitions[0].new_isr_incarnations = {incarnation_id{}, earlier};
  CHECK(outcome(image, shrink_named) == errc::none);
}
