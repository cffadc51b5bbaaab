// What the controller sends after a change, computed from the image before and after it, and
// the frames actors/replica/control_codec makes of it, read back as a replica manager reads them.

#include <catch2/catch.hpp>

#include "actors/controller/metadata/broker_decisions.hpp"
#include "actors/controller/metadata/control_messages.hpp"
#include "actors/controller/metadata/partition_decisions.hpp"
#include "actors/controller/metadata/topic_decisions.hpp"
#include "actors/replica/control_codec.hpp"
#include "actors/replica/metadata_cache.hpp"
#include "tests/unit/controller/metadata/image_builder.hpp"

using namespace capstan;
using namespace capstan::controller;
using namespace capstan::controller::test;

namespace {

const topic_id orders = make_topic_id(1);

// Nodes 1-4 unfenced; orders-0 [1,2,3], orders-1 [2,3,4].
metadata_image cluster() {
  return image_builder()
    .nodes({1, 2, 3, 4})
    .topic("orders", 1, {ids({1, 2, 3}), ids({2, 3, 4})})
    .image();
}

std::vector<int32_t> partitions_in(const node_control& c) {
  std::vector<int32_t> out;
  for (const auto& s : c.leader_and_isr) out.push_back(s.tp.second);
  return out;
}

} // namespace

TEST_CASE("no change, nothing to send", "[controller][control]") {
  const auto image = cluster();
  const auto plan = plan_control_messages(image, image);
  CHECK(plan.nodes.empty());
  CHECK_FALSE(plan.update_metadata);
}

TEST_CASE("a new topic goes to the nodes hosting it, with its leaders' endpoints",
          "[controller][control]") {
  const auto before = image_builder().nodes({1, 2, 3, 4}).image();
  const auto after = image_builder().nodes({1, 2, 3, 4}).topic("orders", 1,
                                                                 {ids({1, 2, 3}), ids({2, 3, 4})})
                       .image();
  const auto plan = plan_control_messages(before, after);
  CHECK(plan.update_metadata);
  REQUIRE(plan.nodes.size() == 4);
  CHECK(partitions_in(plan.nodes.at(node_id{1})) == std::vector<int32_t>{0});
  CHECK(partitions_in(plan.nodes.at(node_id{2})) == std::vector<int32_t>{0, 1});
  CHECK(partitions_in(plan.nodes.at(node_id{4})) == std::vector<int32_t>{1});
  const auto& two = plan.nodes.at(node_id{2});
  const auto& state = two.leader_and_isr[1];
  CHECK(state.tp == topic_partition{"orders", 1});
  CHECK(state.id == orders);
  CHECK(state.leader == node_id{2});
  CHECK(state.replicas == ids({2, 3, 4}));
  CHECK(state.isr == ids({2, 3, 4}));
  REQUIRE(two.leaders.size() == 2);
  CHECK(two.leaders[0].node == node_id{1});
  CHECK(two.leaders[0].host == "cluster1.example");
  CHECK(two.leaders[0].cluster_port == 9501);
  CHECK(two.leaders[0].client_port == 9001);
  CHECK(plan.nodes.at(node_id{4}).leaders.size() == 1);
  CHECK(two.stop_and_delete.empty());
}

TEST_CASE("a leader change goes to every replica of the partition only",
          "[controller][control]") {
  const auto before = cluster();
  const auto after =
    applied(before, fence_broker(before, node_id{1}, broker_epoch{1}, {})->records);
  const auto plan = plan_control_messages(before, after);
  CHECK(plan.update_metadata); // node 1 is fenced
  // orders-0 changed (leader 2, ISR [2,3]); orders-1 did not.
  REQUIRE(plan.nodes.size() == 3);
  for (int32_t n : {1, 2, 3}) {
    INFO("node " << n);
    const auto& c = plan.nodes.at(node_id{n});
    REQUIRE(c.leader_and_isr.size() == 1);
    CHECK(c.leader_and_isr[0].leader == node_id{2});
    CHECK(c.leader_and_isr[0].epoch == leader_epoch{1});
    CHECK(c.leader_and_isr[0].partition_epoch == 1);
  }
  CHECK(plan.nodes.count(node_id{4}) == 0);
}

TEST_CASE("an ISR change alone is sent too, and only a broker change needs no LeaderAndIsr",
          "[controller][control]") {
  const auto before = cluster();
  auto d = alter_partition(before, alter_partition_msg{node_id{2},
                                                      {alter_partition_item{topic_partition{"orders", 1},
                                                                            orders, leader_epoch{0}, 0,
                                                                            ids({2, 4})}}});
  const auto after = applied(before, d.changes.records);
  auto plan = plan_control_messages(before, after);
  CHECK(plan.update_metadata);
  CHECK(plan.nodes.size() == 3);
  CHECK(plan.nodes.count(node_id{1}) == 0);

  auto registered = applied(after, register_broker(after, broker_registration_request{
                                                            node_id{5}, make_incarnation(5),
                                                            test_cluster_id, "h", 1, "h", 2, ""},
                                                   false, {})
                                     ->records);
  plan = plan_control_messages(after, registered);
  CHECK(plan.update_metadata);
  CHECK(plan.nodes.empty());
}

TEST_CASE("a deleted topic stops and deletes every replica", "[controller][control]") {
  const auto before = cluster();
  const auto after = applied(before, {remove_topic_record{orders}});
  const auto plan = plan_control_messages(before, after);
  CHECK(plan.update_metadata);
  REQUIRE(plan.nodes.size() == 4);
  const auto& three = plan.nodes.at(node_id{3});
  CHECK(three.leader_and_isr.empty());
  REQUIRE(three.stop_and_delete.size() == 2);
  CHECK(three.stop_and_delete[0].tp == topic_partition{"orders", 0});
  CHECK(three.stop_and_delete[0].id == orders);
  CHECK(three.stop_and_delete[1].tp == topic_partition{"orders", 1});
  CHECK(three.stop_and_delete[1].epoch == epoch_during_delete);
  CHECK(plan.nodes.at(node_id{1}).stop_and_delete.size() == 1);
}

TEST_CASE("a replica moved off a node is stopped and deleted there", "[controller][control]") {
  const auto before = cluster();
  const auto after = applied(before, {partition_change_record{orders, partition_id{0},
                                                              std::nullopt, ids({1, 2}),
                                                              ids({1, 2, 4}), leader_epoch{0},
                                                              partition_epoch{1}, {}}});
  const auto plan = plan_control_messages(before, after);
  const auto& three = plan.nodes.at(node_id{3});
  CHECK(three.leader_and_isr.empty());
  REQUIRE(three.stop_and_delete.size() == 1);
  CHECK(three.stop_and_delete[0].epoch == leader_epoch{0});
  CHECK(partitions_in(plan.nodes.at(node_id{4})) == std::vector<int32_t>{0});
}

TEST_CASE("the full variant sends a node all its partitions", "[controller][control]") {
  const auto image = cluster();
  const auto full = full_control_messages(image, node_id{3});
  CHECK(partitions_in(full) == std::vector<int32_t>{0, 1});
  CHECK(full.leaders.size() == 2);
  CHECK(full.stop_and_delete.empty());
  CHECK(full_control_messages(image, node_id{9}).empty());
}

TEST_CASE("LeaderAndIsr, StopReplica and UpdateMetadata carry the plan to the node that reads them",
          "[controller][control][frames]") {
  const auto before = cluster();
  const auto fenced = applied(before, fence_broker(before, node_id{1}, broker_epoch{1}, {})->records);
  const auto plan = plan_control_messages(before, fenced);
  const controller_stamp stamp{node_id{7}, 3};

  auto l = decode_leader_and_isr(encode(leader_and_isr(plan.nodes.at(node_id{3}), stamp)));
  REQUIRE(l.ok());
  CHECK(l->controller_id == 7);
  CHECK(l->controller_epoch == 3);
  REQUIRE(l->partitions.size() == 1);
  CHECK(l->partitions[0] == partition_state_msg{topic_partition{"orders", 0}, orders, node_id{2},
                                                leader_epoch{1}, ids({2, 3}), 1, ids({1, 2, 3}), {}});
  REQUIRE(l->leaders.size() == 1);
  CHECK(l->leaders[0] ==
        node_endpoint_msg{node_id{2}, "cluster2.example", 9002, 9502, "", "kafka2.example", 9802});

  const auto removed = applied(fenced, {remove_topic_record{orders}});
  auto s = decode_stop_replica(
    encode(stop_replica(plan_control_messages(fenced, removed).nodes.at(node_id{4}), stamp)));
  REQUIRE(s.ok());
  CHECK(s->controller_id == 7);
  CHECK(s->delete_partitions);
  REQUIRE(s->partitions.size() == 1);
  CHECK(s->partitions[0].tp == topic_partition{"orders", 1});
  CHECK(s->partitions[0].id == orders);
  CHECK(s->partitions[0].epoch == epoch_during_delete);

  auto u = decode_update_metadata(encode(update_metadata(fenced, stamp)));
  REQUIRE(u.ok());
  CHECK(u->controller_epoch == 3);
  CHECK(u->cluster_id == test_cluster_id);
  REQUIRE(u->nodes.size() == 3); // node 1 is fenced
  CHECK(u->nodes[0] ==
        node_endpoint_msg{node_id{2}, "client2.example", 9002, 9502, "", "kafka2.example", 9802});
  REQUIRE(u->topics.size() == 1);
  CHECK(u->topics[0].name == "orders");
  CHECK(u->topics[0].id == orders);
  REQUIRE(u->partitions.size() == 2);
  CHECK(u->partitions[0].leader == node_id{2});
  CHECK(u->partitions[1].tp == topic_partition{"orders", 1});
}

TEST_CASE("a delta UpdateMetadata carries only what changed, and a node's cache with it applied "
          "equals the cache of the whole image",
          "[controller][control][frames]") {
  const controller_stamp stamp{node_id{7}, 3};
  const auto before = image_builder()
                        .nodes({1, 2, 3, 4})
                        .topic("orders", 1, {ids({1, 2, 3}), ids({2, 3, 4})})
                        .topic("gone", 2, {ids({1, 2})})
                        .image();
  auto after = applied(before, fence_broker(before, node_id{1}, broker_epoch{1}, {})->records);
  after = applied(after, {remove_topic_record{make_topic_id(2)}});
  after = applied(after, {topic_config_record{orders, {{"retention.ms", "1000"}}}});

  auto delta = decode_update_metadata(encode(update_metadata_delta(before, after, stamp)));
  REQUIRE(delta.ok());
  CHECK_FALSE(delta->full);
  CHECK(delta->nodes.size() == 3);
  REQUIRE(delta->topics.size() == 1);
  CHECK(delta->topics[0].configs.at("retention.ms") == "1000");
  // Only orders-0 changed (node 1 led it and was in its ISR).
  REQUIRE(delta->partitions.size() == 1);
  CHECK(delta->partitions[0].tp == topic_partition{"orders", 0});
  CHECK(delta->removed_topics == std::vector<topic_id>{make_topic_id(2)});

  const metadata_cache previous(update_metadata(before, stamp), {});
  const metadata_cache by_delta(previous, *delta);
  const metadata_cache whole(update_metadata(after, stamp), {});
  CHECK(by_delta.cluster().topics.size() == 1);
  CHECK(by_delta.cluster().topics.at("orders").configs == whole.cluster().topics.at("orders").configs);
  const auto& a = by_delta.cluster().topics.at("orders").partitions;
  const auto& b = whole.cluster().topics.at("orders").partitions;
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].partition == b[i].partition);
    CHECK(a[i].leader == b[i].leader);
    CHECK(a[i].leader_epoch == b[i].leader_epoch);
    CHECK(a[i].isr == b[i].isr);
    CHECK(a[i].replicas == b[i].replicas);
  }
  CHECK(by_delta.cluster().brokers.size() == whole.cluster().brokers.size());

  // Unchanged images: an empty delta but for the nodes.
  auto none = update_metadata_delta(after, after, stamp);
  CHECK(none.topics.empty());
  CHECK(none.partitions.empty());
  CHECK(none.removed_topics.empty());
}

TEST_CASE("an AlterPartition read from its frame is decided and answered in a frame the leader reads",
          "[controller][control][frames]") {
  const alter_partition_msg sent{
    node_id{2}, {alter_partition_item{topic_partition{"orders", 1}, orders, leader_epoch{0}, 0, ids({2, 4})}}};
  auto request = decode_alter_partition(encode(sent));
  REQUIRE(request.ok());

  const auto image = cluster();
  auto d = alter_partition(image, *request);
  auto answer = decode_alter_partition_response(
    encode(answer_alter_partition(applied(image, d.changes.records), *request, d.outcomes)));
  REQUIRE(answer.ok());
  REQUIRE(answer->partitions.size() == 1);
  const auto& r = answer->partitions[0];
  CHECK(r.error == errc::none);
  CHECK(r.tp == topic_partition{"orders", 1});
  CHECK(r.leader == node_id{2});
  CHECK(r.isr == ids({2, 4}));
  CHECK(r.partition_epoch == 1);

  auto from_follower = *request;
  from_follower.broker = node_id{3};
  auto refused = alter_partition(image, from_follower);
  auto refused_answer = decode_alter_partition_response(
    encode(answer_alter_partition(image, from_follower, refused.outcomes)));
  REQUIRE(refused_answer.ok());
  const auto& rr = refused_answer->partitions.at(0);
  CHECK(rr.error == errc::not_leader_or_follower);
  CHECK_FALSE(rr.message.empty());
  CHECK(rr.leader == no_leader);
  CHECK(rr.isr.empty());
}

TEST_CASE("replicas marked wiped by a registration need no LeaderAndIsr, and reach every node's "
          "cache through UpdateMetadata",
          "[controller][control][frames]") {
  const controller_stamp stamp{node_id{7}, 3};
  auto before = cluster();
  before = applied(before, fence_broker(before, node_id{3}, broker_epoch{3}, {})->records);
  auto fresh = registration(3, next(before.max_broker_epoch()), {}, 5);
  fresh.new_data_dir = true;
  const auto after = applied(before, {fresh});
  REQUIRE(after.topic(orders)->partitions[0].wiped == ids({3}));

  const auto plan = plan_control_messages(before, after);
  CHECK(plan.update_metadata);
  for (const auto& [n, control] : plan.nodes) {
    INFO("node " << n.value());
    CHECK(control.leader_and_isr.empty());
  }
  auto delta = decode_update_metadata(encode(update_metadata_delta(before, after, stamp)));
  REQUIRE(delta.ok());
  REQUIRE(delta->partitions.size() == 2);
  const metadata_cache cache(metadata_cache(update_metadata(before, stamp), {}), *delta);
  for (const auto& p : cache.cluster().topics.at("orders").partitions)
    CHECK(p.wiped == std::vector<int32_t>{3});
}
