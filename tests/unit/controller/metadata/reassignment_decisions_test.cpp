// Partition reassignment: a move starts with the target plus the leaving replicas, completes when
// the target is in the ISR (by AlterPartition or at once), replaces or cancels a running one, and
// every refusal by name.

#include <catch2/catch.hpp>

#include "actors/controller/metadata/control_messages.hpp"
#include "actors/controller/metadata/partition_decisions.hpp"
#include "actors/controller/metadata/reassignment_decisions.hpp"
#include "tests/unit/controller/metadata/image_builder.hpp"

using namespace capstan;
using namespace capstan::controller;
using namespace capstan::controller::test;

namespace {

const topic_id orders = make_topic_id(1);

// Nodes 1-5 unfenced; orders-0 [1,2,3] and orders-1 [2,3,1], ISR = replicas, leaders 1 and 2.
metadata_image cluster() {
  return image_builder()
    .nodes({1, 2, 3, 4, 5})
    .topic("orders", 1, {ids({1, 2, 3}), ids({2, 3, 1})})
    .image();
}

reassignment_target move(int32_t p, std::initializer_list<int32_t> replicas) {
  return reassignment_target{partition_ref{"orders", partition_id{p}}, ids(replicas)};
}

reassignment_target cancel(int32_t p) {
  return reassignment_target{partition_ref{"orders", partition_id{p}}, std::nullopt};
}

// `targets` decided and applied to `image`; REQUIREs that every one was accepted.
metadata_image reassigned(const metadata_image& image, const std::vector<reassignment_target>& targets) {
  auto d = alter_reassignments(image, targets);
  for (const auto& r : d.results) REQUIRE(r.outcome.code == errc::none);
  return applied(image, d.changes.records);
}

errc refusal(const metadata_image& image, const std::vector<reassignment_target>& targets,
             size_t which = 0) {
  auto d = alter_reassignments(image, targets);
  REQUIRE(d.results.size() == targets.size());
  return d.results[which].outcome.code;
}

// The leader of orders-`p` reports `isr` (AlterPartition at the current epochs); applied.
metadata_image isr_reported(const metadata_image& image, int32_t p, std::vector<node_id> isr) {
  const auto& state = *image.partition(orders, partition_id{p});
  alter_partition_msg request{state.leader,
                              {alter_partition_item{topic_partition{"orders", p}, orders,
                                                    state.leader_epoch,
                                                    state.partition_epoch.value(), std::move(isr)}}};
  auto d = alter_partition(image, request);
  REQUIRE(d.outcomes.size() == 1);
  REQUIRE(d.outcomes[0].code == errc::none);
  return applied(image, d.changes.records);
}

const partition_state& partition(const metadata_image& image, int32_t p) {
  return *image.partition(orders, partition_id{p});
}

} // namespace

TEST_CASE("a reassignment grows the replicas to the target plus the leaving ones",
          "[controller][reassign]") {
  const auto image = cluster();
  auto d = alter_reassignments(image, {move(0, {1, 2, 4})});
  REQUIRE(d.results.size() == 1);
  CHECK(d.results[0].outcome.code == errc::none);
  REQUIRE(d.changes.records.size() == 1);
  const auto& change = std::get<partition_change_record>(d.changes.records[0]);
  CHECK_FALSE(change.leader);
  CHECK_FALSE(change.isr);
  CHECK(change.replicas == ids({1, 2, 4, 3}));
  CHECK(change.leader_epoch == leader_epoch{0});
  CHECK(change.partition_epoch == partition_epoch{1});

  const auto after = applied(image, d.changes.records);
  const auto& p = partition(after, 0);
  CHECK(p.reassignment.adding == ids({4}));
  CHECK(p.reassignment.removing == ids({3}));
  CHECK(p.isr == ids({1, 2, 3}));
  // Node 4 is told to host a follower; nobody is told to stop yet.
  const auto plan = plan_control_messages(image, after);
  REQUIRE(plan.nodes.count(node_id{4}) == 1);
  CHECK(plan.nodes.at(node_id{4}).leader_and_isr.size() == 1);
  for (const auto& [n, c] : plan.nodes) CHECK(c.stop_and_delete.empty());
}

TEST_CASE("a reassignment completes when its last target replica joins the ISR",
          "[controller][reassign]") {
  auto image = reassigned(cluster(), {move(0, {1, 2, 4})});
  // The leader shrinks the ISR first (node 3 is gone): not complete, 4 is not in it.
  image = isr_reported(image, 0, ids({1, 2}));
  CHECK(partition(image, 0).reassignment.running());
  const auto before = image;
  image = isr_reported(image, 0, ids({1, 2, 4}));
  const auto& p = partition(image, 0);
  CHECK(p.replicas == ids({1, 2, 4}));
  CHECK(p.isr == ids({1, 2, 4}));
  CHECK(p.leader == node_id{1});
  CHECK(p.leader_epoch == leader_epoch{0});
  CHECK_FALSE(p.reassignment.running());
  // The replica that left is stopped and deleted.
  const auto plan = plan_control_messages(before, image);
  REQUIRE(plan.nodes.count(node_id{3}) == 1);
  REQUIRE(plan.nodes.at(node_id{3}).stop_and_delete.size() == 1);
  CHECK(plan.nodes.at(node_id{3}).stop_and_delete[0].tp == topic_partition{"orders", 0});
}

TEST_CASE("a completed reassignment moves the leader to the first target replica in the ISR "
          "when the leader leaves",
          "[controller][reassign]") {
  auto image = reassigned(cluster(), {move(0, {2, 3, 4})});
  CHECK(partition(image, 0).replicas == ids({2, 3, 4, 1}));
  image = isr_reported(image, 0, ids({1, 2, 3, 4}));
  const auto& p = partition(image, 0);
  CHECK(p.replicas == ids({2, 3, 4}));
  CHECK(p.isr == ids({2, 3, 4}));
  CHECK(p.leader == node_id{2});
  CHECK(p.leader_epoch == leader_epoch{1});
}

TEST_CASE("a reassignment whose target is in the ISR already completes at once",
          "[controller][reassign]") {
  const auto image = cluster();
  SECTION("a new order") {
    const auto after = reassigned(image, {move(0, {3, 2, 1})});
    const auto& p = partition(after, 0);
    CHECK(p.replicas == ids({3, 2, 1}));
    CHECK(p.leader == node_id{1}); // a preferred election moves it, as in Kafka
    CHECK_FALSE(p.reassignment.running());
  }
  SECTION("fewer replicas") {
    const auto after = reassigned(image, {move(0, {2, 3})});
    const auto& p = partition(after, 0);
    CHECK(p.replicas == ids({2, 3}));
    CHECK(p.isr == ids({2, 3}));
    CHECK(p.leader == node_id{2});
    CHECK_FALSE(p.reassignment.running());
  }
  SECTION("the same replicas: nothing to write") {
    auto d = alter_reassignments(image, {move(0, {1, 2, 3})});
    CHECK(d.results[0].outcome.code == errc::none);
    CHECK(d.changes.records.empty());
  }
}

TEST_CASE("a new target replaces a running reassignment, the replaced target's new replicas "
          "leaving with the old ones",
          "[controller][reassign]") {
  auto image = reassigned(cluster(), {move(0, {1, 2, 4})});
  image = reassigned(image, {move(0, {1, 2, 5})});
  const auto& p = partition(image, 0);
  CHECK(p.replicas == ids({1, 2, 5, 4, 3}));
  CHECK(p.reassignment.adding == ids({5}));
  CHECK(p.reassignment.removing == ids({4, 3}));
  image = isr_reported(image, 0, ids({1, 2, 3, 5}));
  CHECK(partition(image, 0).replicas == ids({1, 2, 5}));
}

TEST_CASE("a cancel goes back to the replicas without the added ones", "[controller][reassign]") {
  auto image = reassigned(cluster(), {move(0, {2, 4, 5})});
  image = isr_reported(image, 0, ids({1, 2, 3, 4})); // 4 caught up, 5 not yet
  CHECK(partition(image, 0).reassignment.running());
  image = reassigned(image, {cancel(0)});
  const auto& p = partition(image, 0);
  // The original replicas in the order the move gave them (Kafka's revert does the same): the
  // leader stays where it is until a preferred election.
  CHECK(p.replicas == ids({2, 1, 3}));
  CHECK(p.isr == ids({1, 2, 3}));
  CHECK(p.leader == node_id{1});
  CHECK_FALSE(p.reassignment.running());
}

TEST_CASE("a cancel that would leave no ISR member is refused", "[controller][reassign]") {
  auto image = reassigned(cluster(), {move(1, {4, 5})});
  // 4 joined and then every original replica left the ISR (their nodes died), 4 leads.
  image = isr_reported(image, 1, ids({2, 4}));
  image = applied(image, {partition_change_record{orders, partition_id{1}, node_id{4}, ids({4}),
                                                   std::nullopt, leader_epoch{1},
                                                   partition_epoch{3}, std::nullopt}});
  CHECK(refusal(image, {cancel(1)}) == errc::invalid_replica_assignment);
}

TEST_CASE("reassignments that cannot be are refused by name", "[controller][reassign]") {
  const auto image = cluster();
  CHECK(refusal(image, {reassignment_target{partition_ref{"nope", partition_id{0}}, ids({1})}}) ==
        errc::unknown_topic_or_partition);
  CHECK(refusal(image, {move(7, {1, 2, 3})}) == errc::unknown_topic_or_partition);
  CHECK(refusal(image, {move(0, {})}) == errc::invalid_replica_assignment);
  CHECK(refusal(image, {move(0, {1, 2, 2})}) == errc::invalid_replica_assignment);
  CHECK(refusal(image, {move(0, {1, 2, 9})}) == errc::invalid_replica_assignment);
  CHECK(refusal(image, {cancel(0)}) == errc::no_reassignment_in_progress);
  CHECK(refusal(image, {move(0, {1, 2, 4}), move(0, {1, 2, 5})}, 1) == errc::invalid_request);
  // A refusal leaves the other partitions of the request to go ahead.
  auto d = alter_reassignments(image, {move(0, {1, 2, 9}), move(1, {2, 3, 4})});
  CHECK(d.results[0].outcome.code == errc::invalid_replica_assignment);
  CHECK(d.results[1].outcome.code == errc::none);
  CHECK(d.changes.records.size() == 1);
}
