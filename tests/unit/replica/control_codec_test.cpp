#include <catch2/catch.hpp>

#include <capnp/message.h>

#include "actors/replica/control_codec.hpp"
#include "schema/replication.capnp.h"

using namespace capstan;

// The controller's messages and a leader's AlterPartition survive encode and decode unchanged,
// and what a peer could get wrong is refused, never thrown.

namespace {

topic_id id_of(uint8_t b) {
  topic_id id{};
  id.fill(b);
  return id;
}

std::vector<node_id> nodes(std::initializer_list<int32_t> v) {
  std::vector<node_id> out;
  for (auto n : v) out.push_back(node_id{n});
  return out;
}

partition_state_msg state(int32_t p) {
  return partition_state_msg{topic_partition{"orders", p}, id_of(1), node_id{2}, leader_epoch{4},
                             nodes({2, 3}), 6, nodes({1, 2, 3}), nodes({1})};
}

alter_partition_msg alter(int32_t leader_epoch_value, int32_t partition_epoch_value) {
  return alter_partition_msg{node_id{2}, {alter_partition_item{topic_partition{"orders", 1}, id_of(1),
                                                              leader_epoch{leader_epoch_value},
                                                              partition_epoch_value, nodes({2, 4})}}};
}

} // namespace

TEST_CASE("LeaderAndIsr, UpdateMetadata and StopReplica decode as they were encoded",
          "[replica][control_codec]") {
  const leader_and_isr_msg lai{7, 3, {state(0), state(1)}, {node_endpoint_msg{node_id{2}, "c2", 9002, 9502, "r1"}}};
  auto l = decode_leader_and_isr(encode(lai));
  REQUIRE(l.ok());
  CHECK(l->controller_id == 7);
  CHECK(l->controller_epoch == 3);
  CHECK(l->partitions == lai.partitions);
  CHECK(l->leaders == lai.leaders);

  const update_metadata_msg um{7, 3, "cluster-a", {node_endpoint_msg{node_id{1}, "h1", 1, 2, "", "k1", 9092}},
                               {topic_config_msg{"orders", id_of(1), false, {{"retention.ms", "1000"}}}},
                               {state(0)}};
  auto u = decode_update_metadata(encode(um));
  REQUIRE(u.ok());
  CHECK(u->cluster_id == "cluster-a");
  CHECK(u->nodes == um.nodes);
  CHECK(u->topics == um.topics);
  CHECK(u->partitions == um.partitions);

  const stop_replica_msg sr{7, 3, true, {stop_partition_msg{topic_partition{"orders", 1}, id_of(1), leader_epoch{-2}}}};
  auto s = decode_stop_replica(encode(sr));
  REQUIRE(s.ok());
  CHECK(s->delete_partitions);
  REQUIRE(s->partitions.size() == 1);
  CHECK(s->partitions[0].tp == topic_partition{"orders", 1});
  CHECK(s->partitions[0].id == id_of(1));
  CHECK(s->partitions[0].epoch == leader_epoch{-2});
}

TEST_CASE("control messages keep their place in the controller's stream, and a delta "
          "UpdateMetadata its removed topics",
          "[replica][control_codec]") {
  leader_and_isr_msg lai{7, 3, {state(0)}, {}};
  lai.sequence = 12;
  CHECK(decode_leader_and_isr(encode(lai))->sequence == 12);
  stop_replica_msg sr{7, 3, true, {}};
  sr.sequence = 13;
  CHECK(decode_stop_replica(encode(sr))->sequence == 13);

  update_metadata_msg delta;
  delta.cluster_id = "cluster-a";
  delta.sequence = 14;
  delta.full = false;
  delta.removed_topics = {id_of(5), id_of(6)};
  auto u = decode_update_metadata(encode(delta));
  REQUIRE(u.ok());
  CHECK(u->sequence == 14);
  CHECK_FALSE(u->full);
  CHECK(u->removed_topics == delta.removed_topics);

  // A full one names no removed topics, and a negative sequence is no place at all.
  auto bad = delta;
  bad.full = true;
  CHECK(decode_update_metadata(encode(bad)).code() == errc::invalid_request);
  bad = delta;
  bad.sequence = -1;
  CHECK(decode_update_metadata(encode(bad)).code() == errc::invalid_request);
}

TEST_CASE("control responses decode as they were encoded", "[replica][control_codec]") {
  const control_response_msg m{errc::none, "", {partition_error_msg{topic_partition{"orders", 0},
                                                                    errc::kafka_storage_error, "disk"}}};
  for (bool stop : {false, true}) {
    auto r = decode_control_response(encode(m, stop), stop);
    REQUIRE(r.ok());
    CHECK(r->error == errc::none);
    REQUIRE(r->partitions.size() == 1);
    CHECK(r->partitions[0].error == errc::kafka_storage_error);
    CHECK(r->partitions[0].message == "disk");
  }
}

TEST_CASE("AlterPartition and its response decode as they were encoded", "[replica][control_codec]") {
  auto a = decode_alter_partition(encode(alter(4, 6)));
  REQUIRE(a.ok());
  CHECK(a->broker == node_id{2});
  REQUIRE(a->partitions.size() == 1);
  CHECK(a->partitions[0].tp == topic_partition{"orders", 1});
  CHECK(a->partitions[0].id == id_of(1));
  CHECK(a->partitions[0].epoch == leader_epoch{4});
  CHECK(a->partitions[0].partition_epoch == 6);
  CHECK(a->partitions[0].new_isr == nodes({2, 4}));
  CHECK(a->partitions[0].new_isr_incarnations.empty());

  // With the members' incarnations (KIP-903): the leader's unnamed, the joining member's named.
  auto named = alter(4, 6);
  incarnation_bytes joining{};
  joining.fill(9);
  named.partitions[0].new_isr_incarnations = {incarnation_bytes{}, joining};
  auto n = decode_alter_partition(encode(named));
  REQUIRE(n.ok());
  CHECK(n->partitions[0].new_isr_incarnations == named.partitions[0].new_isr_incarnations);
  // One incarnation for an ISR of two is a malformed request.
  named.partitions[0].new_isr_incarnations = {joining};
  CHECK(decode_alter_partition(encode(named)).code() == errc::invalid_request);

  const alter_partition_response_msg resp{
    errc::none, "",
    {alter_partition_result_item{topic_partition{"orders", 1}, errc::none, "", node_id{2}, leader_epoch{4},
                                 nodes({2, 4}), 7},
     alter_partition_result_item{topic_partition{"orders", 0}, errc::fenced_leader_epoch, "stale",
                                 node_id{-1}, leader_epoch{0}, {}, 0}}};
  auto r = decode_alter_partition_response(encode(resp));
  REQUIRE(r.ok());
  REQUIRE(r->partitions.size() == 2);
  CHECK(r->partitions[0].isr == nodes({2, 4}));
  CHECK(r->partitions[0].partition_epoch == 7);
  CHECK(r->partitions[1].error == errc::fenced_leader_epoch);
  CHECK(r->partitions[1].message == "stale");
  CHECK(r->partitions[1].leader == node_id{-1});
}

TEST_CASE("an AlterPartition a leader could not have sent is refused", "[replica][control_codec]") {
  CHECK(decode_alter_partition(encode(alter(-1, 0))).code() == errc::invalid_request);
  CHECK(decode_alter_partition(encode(alter(0, -1))).code() == errc::invalid_request);

  auto negative_member = alter(0, 0);
  negative_member.partitions[0].new_isr.push_back(node_id{-4});
  CHECK(decode_alter_partition(encode(negative_member)).code() == errc::invalid_request);

  auto from_nobody = alter(0, 0);
  from_nobody.broker = node_id{-1};
  CHECK(decode_alter_partition(encode(from_nobody)).code() == errc::invalid_request);

  capnp::MallocMessageBuilder short_id;
  auto root = short_id.initRoot<schema::AlterPartition>();
  root.setBrokerId(2);
  auto list = root.initPartitions(1);
  list[0].initTopicPartition().setTopic("orders");
  const auto id = id_of(1);
  list[0].setTopicId(capnp::Data::Reader(id.data(), 5));
  CHECK(decode_alter_partition(capnp_frame::from_builder(short_id)).code() == errc::invalid_request);

  // A frame of another type whose first pointer is a struct, where partitions is a list.
  capnp::MallocMessageBuilder other;
  other.initRoot<schema::PartitionState>().initTopicPartition().setTopic("orders");
  CHECK(decode_alter_partition(capnp_frame::from_builder(other)).code() == errc::corrupt_message);
}
