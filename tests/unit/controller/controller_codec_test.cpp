// Node -> controller frames: every request and answer survives a round trip, and a peer's frame
// that is malformed or out of range becomes an error value, never an exception.

#include <capnp/message.h>
#include <catch2/catch.hpp>

#include "actors/controller/controller_codec.hpp"
#include "schema/controller.capnp.h"
#include "schema/replication.capnp.h"

using namespace capstan;

TEST_CASE("node to controller requests and answers survive a round trip", "[controller][codec]") {
  controller::broker_registration_request reg;
  reg.node = node_id{3};
  reg.incarnation[0] = 7;
  reg.incarnation[15] = 9;
  reg.cluster_id = "c1";
  reg.client_host = "10.0.0.3";
  reg.client_port = 9092;
  reg.cluster_host = "10.0.1.3";
  reg.cluster_port = 9093;
  reg.rack = "r1";
  reg.kafka_host = "kafka3.example";
  reg.kafka_port = 19092;
  auto r = decode_broker_registration(encode(reg));
  REQUIRE(r);
  CHECK(r->node == reg.node);
  CHECK(r->incarnation == reg.incarnation);
  CHECK(r->cluster_id == "c1");
  CHECK(r->client_host == "10.0.0.3");
  CHECK(r->client_port == 9092);
  CHECK(r->cluster_host == "10.0.1.3");
  CHECK(r->cluster_port == 9093);
  CHECK(r->rack == "r1");
  CHECK(r->kafka_host == "kafka3.example");
  CHECK(r->kafka_port == 19092);
  CHECK(r->previous_incarnation == controller::incarnation_id{});
  reg.previous_incarnation[3] = 5;
  auto successor = decode_broker_registration(encode(reg));
  REQUIRE(successor);
  CHECK(successor->previous_incarnation == reg.previous_incarnation);

  auto rr = decode_broker_registration_response(encode(
      broker_registration_response_msg{errc::duplicate_broker_registration, "taken", 12, 2}));
  REQUIRE(rr);
  CHECK(rr->error == errc::duplicate_broker_registration);
  CHECK(rr->message == "taken");
  CHECK(rr->broker_epoch == 12);
  CHECK(rr->leader_hint == 2);

  auto hb = decode_broker_heartbeat(encode(broker_heartbeat_msg{node_id{4}, 17, true, {}}));
  REQUIRE(hb);
  CHECK(hb->node == node_id{4});
  CHECK(hb->broker_epoch == 17);
  CHECK(hb->want_fence);
  CHECK(hb->offline.empty());

  const offline_replica damaged{topic_id{7, 1}, 3};
  auto with_offline =
      decode_broker_heartbeat(encode(broker_heartbeat_msg{node_id{4}, 17, false, {damaged}}));
  REQUIRE(with_offline);
  CHECK(with_offline->offline == offline_replicas{damaged});
  CHECK_FALSE(with_offline->want_shut_down);
  auto stopping =
      decode_broker_heartbeat(encode(broker_heartbeat_msg{node_id{4}, 17, false, {}, true}));
  REQUIRE(stopping);
  CHECK(stopping->want_shut_down);

  auto hr = decode_broker_heartbeat_response(
      encode(broker_heartbeat_response_msg{errc::none, {}, false, 1}));
  REQUIRE(hr);
  CHECK(hr->error == errc::none);
  CHECK_FALSE(hr->is_fenced);
  CHECK(hr->leader_hint == 1);
  CHECK_FALSE(hr->should_shut_down);
  auto done = decode_broker_heartbeat_response(
      encode(broker_heartbeat_response_msg{errc::none, {}, true, 1, true}));
  REQUIRE(done);
  CHECK(done->should_shut_down);

  topic_spec spec{"orders", 6, 3, {{"min.insync.replicas", "2"}, {"retention.ms", "1000"}}};
  auto ct = decode_create_topic(encode(spec));
  REQUIRE(ct);
  CHECK(ct->name == "orders");
  CHECK(ct->partitions == 6);
  CHECK(ct->replication_factor == 3);
  CHECK(ct->configs == spec.configs);

  auto dt = decode_delete_topic(encode(delete_topic_msg{"orders"}));
  REQUIRE(dt);
  CHECK(dt->name == "orders");

  auto ub = decode_unregister_broker(encode(unregister_broker_msg{node_id{4}}, node_id{2}));
  REQUIRE(ub);
  CHECK(ub->node == node_id{4});

  topic_id id{};
  id[3] = 42;
  auto tr = decode_topic_response(encode(topic_response_msg{errc::none, {}, id, 3}));
  REQUIRE(tr);
  CHECK(tr->id == id);
  CHECK(tr->leader_hint == 3);
  auto refused =
      decode_topic_response(encode(topic_response_msg{errc::not_controller, "no", id, -1}));
  REQUIRE(refused);
  CHECK(refused->error == errc::not_controller);
  CHECK(refused->id == topic_id{});
}

TEST_CASE("AlterConfigs and a voter's state survive a round trip", "[controller][codec]") {
  auto ac = decode_alter_configs(
    encode(alter_configs_msg{"orders", {{"retention.ms", "5"}}, {"segment.bytes"}}));
  REQUIRE(ac);
  CHECK(ac->name == "orders");
  CHECK(ac->configs == std::map<std::string, std::string>{{"retention.ms", "5"}});
  CHECK(ac->deleted == std::vector<std::string>{"segment.bytes"});

  voter_state v;
  v.node = 2;
  v.role = "leader";
  v.term = 7;
  v.commit_index = 31;
  v.leader = 2;
  v.active = true;
  registered_node n{4, true, 12, {}};
  n.incarnation[15] = 3;
  v.nodes.push_back(n);
  v.voters = {1, 2, 4};
  auto d = decode_voter_state(encode(v));
  REQUIRE(d);
  CHECK(d->node == 2);
  CHECK(d->role == "leader");
  CHECK(d->term == 7);
  CHECK(d->commit_index == 31);
  CHECK(d->leader == 2);
  CHECK(d->active);
  REQUIRE(d->nodes.size() == 1);
  CHECK(d->nodes[0].node == 4);
  CHECK(d->nodes[0].fenced);
  CHECK(d->nodes[0].broker_epoch == 12);
  CHECK(d->nodes[0].incarnation == n.incarnation);
  CHECK(d->voters == std::vector<int32_t>{1, 2, 4});
}

TEST_CASE("a malformed or out-of-range node request decodes to an error value",
          "[controller][codec]") {
  // A frame of another type whose first pointer is a struct, where these requests hold a Text
  // (the topic's name) or Data (the incarnation id).
  capnp::MallocMessageBuilder other;
  other.initRoot<schema::PartitionState>().initTopicPartition().setTopic("orders");
  const auto frame = capnp_frame::from_builder(other);
  CHECK(decode_create_topic(frame).code() == errc::corrupt_message);
  CHECK(decode_delete_topic(frame).code() == errc::corrupt_message);
  CHECK(decode_broker_registration(frame).code() == errc::corrupt_message);

  // The empty frame is a registration without an incarnation id.
  CHECK(decode_broker_registration(capnp_frame{}).code() == errc::invalid_request);

  controller::broker_registration_request neg;
  neg.node = node_id{-1};
  CHECK(decode_broker_registration(encode(neg)).code() == errc::invalid_request);

  capnp::MallocMessageBuilder short_id;
  auto r = short_id.initRoot<schema::BrokerRegistration>();
  r.setNodeId(1);
  uint8_t five[5] = {1, 2, 3, 4, 5};
  r.setIncarnationId(capnp::Data::Reader(five, 5));
  CHECK(decode_broker_registration(capnp_frame::from_builder(short_id)).code() ==
        errc::invalid_request);

  capnp::MallocMessageBuilder twice;
  auto c = twice.initRoot<schema::CreateTopic>();
  c.setName("orders");
  auto configs = c.initConfigs(2);
  configs[0].setName("retention.ms");
  configs[1].setName("retention.ms");
  CHECK(decode_create_topic(capnp_frame::from_builder(twice)).code() == errc::invalid_request);

  CHECK(decode_broker_heartbeat(
            encode(broker_heartbeat_msg{node_id{1}, 2, false, {{topic_id{1}, -1}}}))
            .code() == errc::invalid_request);
  capnp::MallocMessageBuilder idless;
  auto h = idless.initRoot<schema::BrokerHeartbeat>();
  h.setNodeId(1);
  h.initOfflineReplicas(1)[0].setPartition(0);
  CHECK(decode_broker_heartbeat(capnp_frame::from_builder(idless)).code() == errc::invalid_request);
}

TEST_CASE("AllocateProducerIds and its answer survive a round trip", "[controller][codec]") {
  auto req = decode_allocate_producer_ids(encode(allocate_producer_ids_msg{node_id{3}}));
  REQUIRE(req);
  CHECK(req->node == node_id{3});
  CHECK(decode_allocate_producer_ids(encode(allocate_producer_ids_msg{node_id{-1}})).code() ==
        errc::invalid_request);

  auto ok = decode_allocate_producer_ids_response(
      encode(allocate_producer_ids_response_msg{errc::none, {}, 4000, 1000, 2}));
  REQUIRE(ok);
  CHECK(ok->first_id == 4000);
  CHECK(ok->size == 1000);
  CHECK(ok->leader_hint == 2);
  auto refused = decode_allocate_producer_ids_response(
      encode(allocate_producer_ids_response_msg{errc::not_controller, "no", 0, 0, 1}));
  REQUIRE(refused);
  CHECK(refused->error == errc::not_controller);
  // A successful answer with no ids in it is a peer's mistake.
  CHECK(decode_allocate_producer_ids_response(
            encode(allocate_producer_ids_response_msg{errc::none, {}, 5, 0, 1}))
            .code() == errc::invalid_request);
}

TEST_CASE("CreatePartitions, ElectLeaders and its answer survive a round trip",
          "[controller][codec]") {
  auto grow = decode_create_partitions(encode(create_partitions_msg{"orders", 6}));
  REQUIRE(grow);
  CHECK(grow->name == "orders");
  CHECK(grow->total == 6);

  auto all = decode_elect_leaders(encode(elect_leaders_msg{}));
  REQUIRE(all);
  CHECK(all->partitions.empty());
  auto some = decode_elect_leaders(encode(elect_leaders_msg{{{"orders", 2}, {"logs", 0}}}));
  REQUIRE(some);
  REQUIRE(some->partitions.size() == 2);
  CHECK(some->partitions[0].topic == "orders");
  CHECK(some->partitions[0].partition == 2);
  CHECK(some->partitions[1].topic == "logs");

  elect_leaders_response_msg answer{errc::none, {}, 3, {}};
  answer.results.push_back(election_outcome{"orders", 2, errc::none, {}});
  answer.results.push_back(
      election_outcome{"logs", 0, errc::preferred_leader_not_available, "fenced"});
  auto r = decode_elect_leaders_response(encode(answer));
  REQUIRE(r);
  CHECK(r->error == errc::none);
  CHECK(r->leader_hint == 3);
  REQUIRE(r->results.size() == 2);
  CHECK(r->results[0].error == errc::none);
  CHECK(r->results[1].topic == "logs");
  CHECK(r->results[1].error == errc::preferred_leader_not_available);
  CHECK(r->results[1].message == "fenced");

  auto refused = decode_elect_leaders_response(
      encode(elect_leaders_response_msg{errc::not_controller, "not me", 2, {}}));
  REQUIRE(refused);
  CHECK(refused->error == errc::not_controller);
  CHECK(refused->message == "not me");
}

TEST_CASE("a registration of a node that names no previous incarnation decodes with none, and a "
          "malformed one is refused",
          "[controller][codec]") {
  // A frame written without the field, as by a node from before it existed.
  capnp::MallocMessageBuilder b;
  auto root = b.initRoot<schema::BrokerRegistration>();
  root.setNodeId(2);
  const std::array<uint8_t, 16> inc{1};
  root.setIncarnationId(capnp::Data::Reader(inc.data(), inc.size()));
  root.setClusterId("c1");
  auto r = decode_broker_registration(capnp_frame::from_builder(b));
  REQUIRE(r);
  CHECK(r->previous_incarnation == controller::incarnation_id{});

  const std::array<uint8_t, 3> short_id{1, 2, 3};
  root.setPreviousIncarnationId(capnp::Data::Reader(short_id.data(), short_id.size()));
  CHECK(decode_broker_registration(capnp_frame::from_builder(b)).code() == errc::invalid_request);
}

TEST_CASE("AddVoter and RemoveVoter survive a round trip", "[controller][codec][voters]") {
  auto add = decode_add_voter(encode(add_voter_msg{node_id{4}, "10.0.1.4:9093"}, node_id{2}));
  REQUIRE(add);
  CHECK(add->voter == node_id{4});
  CHECK(add->endpoint == "10.0.1.4:9093");
  auto v6 = decode_add_voter(encode(add_voter_msg{node_id{0}, "[::1]:1"}));
  REQUIRE(v6);
  CHECK(v6->endpoint == "[::1]:1");
  auto remove = decode_remove_voter(encode(remove_voter_msg{node_id{3}}, node_id{2}));
  REQUIRE(remove);
  CHECK(remove->voter == node_id{3});

  topic_response_msg answer;
  answer.error = errc::duplicate_voter;
  answer.message = "node 4 is a voter already";
  answer.leader_hint = 2;
  auto a = decode_topic_response(encode(answer));
  REQUIRE(a);
  CHECK(a->error == errc::duplicate_voter);
  CHECK(a->message == answer.message);
  CHECK(a->leader_hint == 2);
}

TEST_CASE("a malformed or out-of-range voter change or voter state decodes to an error value",
          "[controller][codec][voters]") {
  // A frame of another type whose first pointer is a struct, where AddVoter holds a Text.
  capnp::MallocMessageBuilder other;
  other.initRoot<schema::PartitionState>().initTopicPartition().setTopic("orders");
  CHECK(decode_add_voter(capnp_frame::from_builder(other)).code() == errc::corrupt_message);

  CHECK(decode_add_voter(encode(add_voter_msg{node_id{-1}, "h:9093"})).code() ==
        errc::invalid_request);
  CHECK(decode_remove_voter(encode(remove_voter_msg{node_id{-2}})).code() ==
        errc::invalid_request);
  for (const char* bad : {"", "h", "h:", ":9093", "h:0", "h:65536", "h:-1", "h:x",
                          "PLAINTEXT://h:9093"}) {
    INFO(bad);
    CHECK(decode_add_voter(encode(add_voter_msg{node_id{4}, bad})).code() ==
          errc::invalid_request);
  }
  CHECK(decode_add_voter(encode(add_voter_msg{node_id{4}, std::string(300, 'h') + ":9093"}))
            .code() == errc::invalid_request);
  // The empty frame is a voter change of node 0 without an endpoint.
  CHECK(decode_add_voter(capnp_frame{}).code() == errc::invalid_request);
  CHECK(decode_remove_voter(capnp_frame{}));

  capnp::MallocMessageBuilder many;
  auto vs = many.initRoot<schema::VoterState>();
  vs.initVoters(256);
  CHECK(decode_voter_state(capnp_frame::from_builder(many)).code() == errc::invalid_request);
}
