// What the controller sends after a change, computed from the image before and after it, and the
// replication.capnp frames built from it.

#include <catch2/catch.hpp>

#include <random>

#include <capnp/message.h>

#include "actors/controller/metadata/broker_decisions.hpp"
#include "actors/controller/metadata/control_frames.hpp"
#include "actors/controller/metadata/control_messages.hpp"
#include "actors/controller/metadata/partition_decisions.hpp"
#include "actors/controller/metadata/topic_decisions.hpp"
#include "schema/replication.capnp.h"
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
  for (const auto& s : c.leader_and_isr) out.push_back(s.partition.value());
  return out;
}

std::vector<node_id> as_nodes(capnp::List<int32_t>::Reader list) {
  std::vector<node_id> out;
  for (auto v : list) out.push_back(node_id{v});
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
  CHECK(state.topic == "orders");
  CHECK(state.id == orders);
  CHECK(state.leader == node_id{2});
  CHECK(state.replicas == ids({2, 3, 4}));
  CHECK(state.isr == ids({2, 3, 4}));
  REQUIRE(two.leaders.size() == 2);
  CHECK(two.leaders[0].id == node_id{1});
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
    CHECK(c.leader_and_isr[0].leader_epoch == leader_epoch{1});
    CHECK(c.leader_and_isr[0].partition_epoch == partition_epoch{1});
  }
  CHECK(plan.nodes.count(node_id{4}) == 0);
}

TEST_CASE("an ISR change alone is sent too, and only a broker change needs no LeaderAndIsr",
          "[controller][control]") {
  const auto before = cluster();
  auto d = alter_partition(before, alter_partition_request{
                                     node_id{2}, {alter_partition_item{"orders", orders,
                                                                       partition_id{1},
                                                                       leader_epoch{0},
                                                                       partition_epoch{0},
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
  CHECK(three.stop_and_delete[0].topic == "orders");
  CHECK(three.stop_and_delete[0].id == orders);
  CHECK(three.stop_and_delete[1].partition == partition_id{1});
  CHECK(three.stop_and_delete[1].leader_epoch == epoch_during_delete);
  CHECK(plan.nodes.at(node_id{1}).stop_and_delete.size() == 1);
}

TEST_CASE("a replica moved off a node is stopped and deleted there", "[controller][control]") {
  const auto before = cluster();
  const auto after = applied(before, {partition_change_record{orders, partition_id{0},
                                                              std::nullopt, ids({1, 2}),
                                                              ids({1, 2, 4}), leader_epoch{0},
                                                              partition_epoch{1}}});
  const auto plan = plan_control_messages(before, after);
  const auto& three = plan.nodes.at(node_id{3});
  CHECK(three.leader_and_isr.empty());
  REQUIRE(three.stop_and_delete.size() == 1);
  CHECK(three.stop_and_delete[0].leader_epoch == leader_epoch{0});
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

TEST_CASE("LeaderAndIsr, StopReplica and UpdateMetadata frames carry the plan",
          "[controller][control][frames]") {
  const auto before = cluster();
  const auto fenced = applied(before, fence_broker(before, node_id{1}, broker_epoch{1}, {})->records);
  const auto plan = plan_control_messages(before, fenced);
  const controller_stamp stamp{node_id{7}, 3};

  auto lai = leader_and_isr_frame(plan.nodes.at(node_id{3}), stamp);
  auto lai_reader = lai.reader<schema::LeaderAndIsr>();
  auto l = lai_reader.root();
  CHECK(l.getControllerId() == 7);
  CHECK(l.getControllerEpoch() == 3);
  REQUIRE(l.getPartitions().size() == 1);
  auto ps = l.getPartitions()[0];
  CHECK(ps.getTopicPartition().getTopic() == "orders");
  CHECK(ps.getTopicPartition().getPartition() == 0);
  CHECK(ps.getTopicId().size() == 16);
  CHECK(ps.getLeader() == 2);
  CHECK(ps.getLeaderEpoch() == 1);
  CHECK(as_nodes(ps.getIsr()) == ids({2, 3}));
  CHECK(ps.getPartitionEpoch() == 1);
  CHECK(as_nodes(ps.getReplicas()) == ids({1, 2, 3}));
  REQUIRE(l.getLeaders().size() == 1);
  CHECK(l.getLeaders()[0].getNodeId() == 2);
  CHECK(l.getLeaders()[0].getHost() == "cluster2.example");
  CHECK(l.getLeaders()[0].getClusterPort() == 9502);

  const auto removed = applied(fenced, {remove_topic_record{orders}});
  auto stop = stop_replica_frame(plan_control_messages(fenced, removed).nodes.at(node_id{4}), stamp);
  auto stop_reader = stop.reader<schema::StopReplica>();
  auto s = stop_reader.root();
  CHECK(s.getDeletePartitions());
  REQUIRE(s.getPartitions().size() == 1);
  CHECK(s.getPartitions()[0].getTopicPartition().getPartition() == 1);
  CHECK(s.getPartitions()[0].getLeaderEpoch() == -2);

  auto um = update_metadata_frame(fenced, stamp);
  auto um_reader = um.reader<schema::UpdateMetadata>();
  auto u = um_reader.root();
  CHECK(u.getClusterId() == test_cluster_id);
  REQUIRE(u.getNodes().size() == 3); // node 1 is fenced
  CHECK(u.getNodes()[0].getNodeId() == 2);
  CHECK(u.getNodes()[0].getHost() == "client2.example");
  REQUIRE(u.getTopics().size() == 1);
  CHECK(u.getTopics()[0].getName() == "orders");
  CHECK(u.getPartitions().size() == 2);
}

TEST_CASE("AlterPartition frames decode, refuse garbage, and are answered",
          "[controller][control][frames]") {
  capnp::MallocMessageBuilder builder;
  auto root = builder.initRoot<schema::AlterPartition>();
  root.setBrokerId(2);
  auto list = root.initPartitions(1);
  list[0].initTopicPartition().setTopic("orders");
  list[0].getTopicPartition().setPartition(1);
  list[0].setTopicId(capnp::Data::Reader(orders.data(), orders.size()));
  list[0].setLeaderEpoch(0);
  list[0].setPartitionEpoch(0);
  auto isr = list[0].initNewIsr(2);
  isr.set(0, 2);
  isr.set(1, 4);
  auto request = decode_alter_partition(capnp_frame::from_builder(builder));
  REQUIRE(request.ok());
  CHECK(request->broker == node_id{2});
  REQUIRE(request->partitions.size() == 1);
  CHECK(request->partitions[0] == alter_partition_item{"orders", orders, partition_id{1},
                                                       leader_epoch{0}, partition_epoch{0},
                                                       ids({2, 4})});

  const auto image = cluster();
  auto d = alter_partition(image, *request);
  auto answer = answer_alter_partition(applied(image, d.changes.records), *request, d.outcomes);
  auto frame = alter_partition_response_frame(answer);
  auto reader = frame.reader<schema::AlterPartitionResponse>();
  auto r = reader.root().getPartitions()[0];
  CHECK(r.getErrorCode() == 0);
  CHECK(r.getLeader() == 2);
  CHECK(as_nodes(r.getIsr()) == ids({2, 4}));
  CHECK(r.getPartitionEpoch() == 1);

  auto refused = alter_partition(image, alter_partition_request{node_id{3}, request->partitions});
  auto refused_frame = alter_partition_response_frame(
    answer_alter_partition(image, alter_partition_request{node_id{3}, request->partitions},
                           refused.outcomes));
  auto refused_reader = refused_frame.reader<schema::AlterPartitionResponse>();
  auto rr = refused_reader.root().getPartitions()[0];
  CHECK(rr.getErrorCode() == static_cast<uint8_t>(errc::not_leader_or_follower));
  CHECK(rr.getErrorMessage().size() > 0);
  CHECK(rr.getLeader() == -1);

  CHECK(decode_alter_partition(capnp_frame{}).code() == errc::corrupt_message);
  list[0].setTopicId(capnp::Data::Reader(orders.data(), 5));
  CHECK(decode_alter_partition(capnp_frame::from_builder(builder)).code() == errc::corrupt_message);
  list[0].setTopicId(capnp::Data::Reader(orders.data(), orders.size()));
  isr.set(1, -4);
  CHECK(decode_alter_partition(capnp_frame::from_builder(builder)).code() == errc::corrupt_message);
  isr.set(1, 4);
  list[0].setLeaderEpoch(-1);
  CHECK(decode_alter_partition(capnp_frame::from_builder(builder)).code() == errc::corrupt_message);
  // A frame of another type whose first pointer is a struct, where partitions is a list.
  capnp::MallocMessageBuilder other;
  other.initRoot<schema::PartitionState>().initTopicPartition().setTopic("orders");
  CHECK(decode_alter_partition(capnp_frame::from_builder(other)).code() == errc::corrupt_message);
}
