// The Kafka listener's group APIs (actors/gateway/kafka/kafka_find_coordinator to
// kafka_delete_groups): a request built and encoded with the codec, decoded as the listener
// decodes it, gives the coordinator handlers the fields the client sent; a handler's answer
// becomes a response that encodes and decodes back to the same values at each version.

#include <catch2/catch.hpp>

#include "actors/gateway/kafka/kafka_delete_groups.hpp"
#include "actors/gateway/kafka/kafka_describe_groups.hpp"
#include "actors/gateway/kafka/kafka_find_coordinator.hpp"
#include "actors/gateway/kafka/kafka_heartbeat.hpp"
#include "actors/gateway/kafka/kafka_join_group.hpp"
#include "actors/gateway/kafka/kafka_leave_group.hpp"
#include "actors/gateway/kafka/kafka_list_groups.hpp"
#include "actors/gateway/kafka/kafka_offset_commit.hpp"
#include "actors/gateway/kafka/kafka_offset_fetch.hpp"
#include "actors/gateway/kafka/kafka_response_support.hpp"
#include "actors/gateway/kafka/kafka_sync_group.hpp"
#include "runtime/kafka/api_schemas.hpp"
#include "tests/support/kafka_round_trip.hpp"

using namespace capstan;
using namespace capstan::test;
using kafka::struct_value;
using kafka::value;

namespace {

bytes some_bytes(uint8_t seed) {
  return bytes{0x00, seed, 0xff, static_cast<uint8_t>(seed + 1)};
}


} // namespace

TEST_CASE("FindCoordinator answers the coordinator node at its Kafka listener",
          "[gateway][kafka]") {
  broker_info b;
  b.node_id = 2;
  b.host = "10.0.0.2";
  b.port = 9192;
  b.kafka_host = "kafka2.example";
  b.kafka_port = 9092;
  broker_info no_kafka = b;
  no_kafka.node_id = 3;
  no_kafka.kafka_port = 0;
  const std::vector<broker_info> brokers{b, no_kafka};
  for (int16_t version = 0; version <= 3; ++version) {
    INFO("version " << version);
    auto body = request_body(kafka::find_coordinator_api);
    body["Key"] = value("g1");
    auto req = sent(kafka::find_coordinator_api, version, body);
    CHECK(req.body["Key"].as_string() == "g1");
    CHECK(req.body["KeyType"].as_int() == kafka_coordinator_key_group);

    coordinator_address at;
    at.node = 2;
    at.host = "10.0.0.2";
    at.port = 9192;
    auto ok = received(kafka::find_coordinator_api, req,
                       find_coordinator_response(answer<coordinator_address>{at, {}}, brokers));
    CHECK(code_of(ok["ErrorCode"]) == 0);
    CHECK(ok["NodeId"].as_int() == 2);
    CHECK(ok["Host"].as_string() == "kafka2.example");
    CHECK(ok["Port"].as_int() == 9092);

    at.node = 3;
    auto none = received(kafka::find_coordinator_api, req,
                         find_coordinator_response(answer<coordinator_address>{at, {}}, brokers));
    CHECK(code_of(none["ErrorCode"]) == 15);
    CHECK(none["NodeId"].as_int() == -1);

    auto loading = received(
        kafka::find_coordinator_api, req,
        find_coordinator_response(failed<coordinator_address>(errc::coordinator_not_available),
                                  brokers));
    CHECK(code_of(loading["ErrorCode"]) == 15);
  }
}

TEST_CASE("JoinGroup passes the member's protocols and metadata bytes to the coordinator",
          "[gateway][kafka]") {
  for (int16_t version = 0; version <= 7; ++version) {
    INFO("version " << version);
    auto body = request_body(kafka::join_group_api);
    body["GroupId"] = value("g1");
    body["SessionTimeoutMs"] = value(int64_t{10000});
    body["RebalanceTimeoutMs"] = value(int64_t{30000});
    body["MemberId"] = value("");
    body["ProtocolType"] = value("consumer");
    value::array_type protocols;
    for (auto name : {"range", "roundrobin"}) {
      auto p = element_of(body, "Protocols");
      p["Name"] = value(name);
      p["Metadata"] = value(some_bytes(static_cast<uint8_t>(name[0])));
      protocols.emplace_back(std::move(p));
    }
    body["Protocols"] = value(std::move(protocols));
    if (version >= 5) body["GroupInstanceId"] = value("static-1");
    auto req = sent(kafka::join_group_api, version, body);

    auto call = join_group_call(req);
    CHECK(call.group == "g1");
    CHECK(call.request.client_id == "cli");
    CHECK(call.request.member_id.empty());
    CHECK(call.request.group_instance_id == (version >= 5 ? "static-1" : ""));
    CHECK(call.request.session_timeout_ms == 10000);
    // v0 has no rebalance timeout: Kafka uses the session timeout.
    CHECK(call.request.rebalance_timeout_ms == (version == 0 ? 10000 : 30000));
    CHECK(call.request.protocol_type == "consumer");
    REQUIRE(call.request.protocols.size() == 2);
    CHECK(call.request.protocols[0].name == "range");
    CHECK(call.request.protocols[0].metadata == some_bytes('r'));
    CHECK(call.request.protocols[1].name == "roundrobin");

    join_group_response joined;
    joined.generation = 4;
    joined.protocol_name = "range";
    joined.leader = "cli-a";
    joined.member_id = "cli-a";
    group_member_metadata m;
    m.member_id = "cli-a";
    m.metadata = some_bytes(7);
    joined.members = {m};
    auto ok = received(kafka::join_group_api, req,
                       join_group_response_body(answer<join_group_response>{joined, {}}, version,
                                                "consumer"));
    CHECK(code_of(ok["ErrorCode"]) == 0);
    CHECK(ok["GenerationId"].as_int() == 4);
    CHECK(ok["ProtocolName"].as_string() == "range");
    CHECK(ok["Leader"].as_string() == "cli-a");
    CHECK(ok["MemberId"].as_string() == "cli-a");
    if (version >= 7) CHECK(ok["ProtocolType"].as_string() == "consumer");
    REQUIRE(ok["Members"].as_array().size() == 1);
    CHECK(ok["Members"].as_array()[0].as_struct()["Metadata"].as_bytes() == some_bytes(7));
  }
}

TEST_CASE("JoinGroup MEMBER_ID_REQUIRED answers the id the coordinator assigned",
          "[gateway][kafka]") {
  auto req = sent(kafka::join_group_api, 4, request_body(kafka::join_group_api));
  auto refused = failed<join_group_response>(errc::member_id_required);
  refused.value.member_id = "cli-1234";
  auto body = received(kafka::join_group_api, req, join_group_response_body(refused, 4, ""));
  CHECK(code_of(body["ErrorCode"]) == 79);
  CHECK(body["MemberId"].as_string() == "cli-1234");
  CHECK(body["GenerationId"].as_int() == -1);
}

TEST_CASE("SyncGroup passes assignments through and answers the member's own",
          "[gateway][kafka]") {
  for (int16_t version = 0; version <= 5; ++version) {
    INFO("version " << version);
    auto body = request_body(kafka::sync_group_api);
    body["GroupId"] = value("g1");
    body["GenerationId"] = value(int64_t{4});
    body["MemberId"] = value("cli-a");
    if (version >= 5) {
      body["ProtocolType"] = value("consumer");
      body["ProtocolName"] = value("range");
    }
    auto a = element_of(body, "Assignments");
    a["MemberId"] = value("cli-b");
    a["Assignment"] = value(some_bytes(3));
    body["Assignments"] = value(value::array_type{value(std::move(a))});
    auto req = sent(kafka::sync_group_api, version, body);

    auto call = sync_group_call(req.body);
    CHECK(call.group == "g1");
    CHECK(call.request.member_id == "cli-a");
    CHECK(call.request.generation == 4);
    REQUIRE(call.request.assignments.size() == 1);
    CHECK(call.request.assignments[0].member_id == "cli-b");
    CHECK(call.request.assignments[0].assignment == some_bytes(3));

    sync_group_response synced;
    synced.assignment = some_bytes(5);
    auto ok = received(kafka::sync_group_api, req,
                       sync_group_response_body(answer<sync_group_response>{synced, {}}, req.body));
    CHECK(code_of(ok["ErrorCode"]) == 0);
    CHECK(ok["Assignment"].as_bytes() == some_bytes(5));
    if (version >= 5) CHECK(ok["ProtocolName"].as_string() == "range");

    auto rebalancing = received(
        kafka::sync_group_api, req,
        sync_group_response_body(failed<sync_group_response>(errc::rebalance_in_progress),
                                 req.body));
    CHECK(code_of(rebalancing["ErrorCode"]) == 27);
    CHECK(rebalancing["Assignment"].as_bytes().empty());
  }
}

TEST_CASE("Heartbeat names the member and its generation", "[gateway][kafka]") {
  for (int16_t version = 0; version <= 4; ++version) {
    INFO("version " << version);
    auto body = request_body(kafka::heartbeat_api);
    body["GroupId"] = value("g1");
    body["GenerationId"] = value(int64_t{6});
    body["MemberId"] = value("cli-a");
    auto m = heartbeat_member(sent(kafka::heartbeat_api, version, body).body);
    CHECK(m.member_id == "cli-a");
    CHECK(m.generation == 6);
    CHECK(m.group_instance_id.empty());
  }
}

TEST_CASE("LeaveGroup takes one member before v3 and a batch from v3", "[gateway][kafka]") {
  for (int16_t version = 0; version <= 4; ++version) {
    INFO("version " << version);
    auto body = request_body(kafka::leave_group_api);
    body["GroupId"] = value("g1");
    if (version < 3) {
      body["MemberId"] = value("cli-a");
    } else {
      value::array_type members;
      for (auto id : {"cli-a", "cli-b"}) {
        auto e = element_of(body, "Members");
        e["MemberId"] = value(id);
        members.emplace_back(std::move(e));
      }
      body["Members"] = value(std::move(members));
    }
    auto req = sent(kafka::leave_group_api, version, body);
    auto leaving = leaving_members(req);
    REQUIRE(leaving.size() == (version < 3 ? 1u : 2u));
    CHECK(leaving[0].member_id == "cli-a");

    std::vector<answer<bool>> answers{answer<bool>{true, {}}};
    if (version >= 3) answers.push_back(failed<bool>(errc::unknown_member_id));
    auto out = received(kafka::leave_group_api, req,
                        leave_group_response_body(leaving, answers, version));
    CHECK(code_of(out["ErrorCode"]) == 0);
    if (version >= 3) {
      const auto& members = out["Members"].as_array();
      REQUIRE(members.size() == 2);
      CHECK(code_of(members[0].as_struct()["ErrorCode"]) == 0);
      CHECK(members[1].as_struct()["MemberId"].as_string() == "cli-b");
      CHECK(code_of(members[1].as_struct()["ErrorCode"]) == 25);
    }
  }
}

TEST_CASE("LeaveGroup v3 puts a coordinator error at the top level too", "[gateway][kafka]") {
  auto body = request_body(kafka::leave_group_api);
  auto e = element_of(body, "Members");
  e["MemberId"] = value("cli-a");
  body["Members"] = value(value::array_type{value(std::move(e))});
  auto req = sent(kafka::leave_group_api, 3, body);
  auto out = received(kafka::leave_group_api, req,
                      leave_group_response_body(leaving_members(req),
                                                {failed<bool>(errc::not_coordinator)}, 3));
  CHECK(code_of(out["ErrorCode"]) == 16);
}

TEST_CASE("OffsetCommit passes each partition's offset, epoch and metadata", "[gateway][kafka]") {
  for (int16_t version = 2; version <= 8; ++version) {
    INFO("version " << version);
    auto body = request_body(kafka::offset_commit_api);
    body["GroupId"] = value("g1");
    body["GenerationIdOrMemberEpoch"] = value(int64_t{3});
    body["MemberId"] = value("cli-a");
    auto t = element_of(body, "Topics");
    t["Name"] = value("orders");
    value::array_type parts;
    for (int64_t p = 0; p < 2; ++p) {
      auto e = element_of(t, "Partitions");
      e["PartitionIndex"] = value(p);
      e["CommittedOffset"] = value(int64_t{100 + p});
      e["CommittedLeaderEpoch"] = value(int64_t{2});
      e["CommittedMetadata"] = p == 0 ? value("m") : value(kafka::null_value{});
      parts.emplace_back(std::move(e));
    }
    t["Partitions"] = value(std::move(parts));
    body["Topics"] = value(value::array_type{value(std::move(t))});
    auto req = sent(kafka::offset_commit_api, version, body);

    auto call = offset_commit_call(req.body);
    CHECK(call.group == "g1");
    CHECK(call.member.member_id == "cli-a");
    CHECK(call.member.generation == 3);
    REQUIRE(call.entries.size() == 2);
    CHECK(call.entries[0].topic == "orders");
    CHECK(call.entries[1].partition == 1);
    CHECK(call.entries[1].offset == 101);
    CHECK(call.entries[0].metadata == "m");
    CHECK(call.entries[1].metadata.empty());
    CHECK(call.entries[0].leader_epoch == (version >= 6 ? 2 : -1));

    auto done = call.entries;
    done[1].error = errc::illegal_generation;
    auto out = received(kafka::offset_commit_api, req,
                        offset_commit_response_body(answer<group_offsets>{done, {}}, req.body));
    const auto& rparts = out["Topics"].as_array().at(0).as_struct()["Partitions"].as_array();
    REQUIRE(rparts.size() == 2);
    CHECK(code_of(rparts[0].as_struct()["ErrorCode"]) == 0);
    CHECK(code_of(rparts[1].as_struct()["ErrorCode"]) == 22);

    auto refused = received(
        kafka::offset_commit_api, req,
        offset_commit_response_body(failed<group_offsets>(errc::not_coordinator), req.body));
    for (const auto& p :
         refused["Topics"].as_array().at(0).as_struct()["Partitions"].as_array())
      CHECK(code_of(p.as_struct()["ErrorCode"]) == 16);
  }
}

TEST_CASE("OffsetFetch asks for the named partitions or, with null topics, all of them",
          "[gateway][kafka]") {
  for (int16_t version = 1; version <= 7; ++version) {
    INFO("version " << version);
    auto body = request_body(kafka::offset_fetch_api);
    body["GroupId"] = value("g1");
    auto t = element_of(body, "Topics");
    t["Name"] = value("orders");
    t["PartitionIndexes"] = value(value::array_type{value(int64_t{0}), value(int64_t{3})});
    body["Topics"] = value(value::array_type{value(std::move(t))});
    auto req = sent(kafka::offset_fetch_api, version, body);

    auto call = offset_fetch_call(req.body);
    CHECK(call.group == "g1");
    REQUIRE(call.entries.size() == 2);
    CHECK(call.entries[1].topic == "orders");
    CHECK(call.entries[1].partition == 3);

    auto found = call.entries;
    found[0].offset = 42;
    found[0].leader_epoch = 5;
    found[0].metadata = "m";
    auto out = received(kafka::offset_fetch_api, req,
                        offset_fetch_response_body(answer<group_offsets>{found, {}}, call, version));
    const auto& parts = out["Topics"].as_array().at(0).as_struct()["Partitions"].as_array();
    REQUIRE(parts.size() == 2);
    CHECK(parts[0].as_struct()["CommittedOffset"].as_int() == 42);
    CHECK(parts[0].as_struct()["CommittedLeaderEpoch"].as_int() == (version >= 5 ? 5 : -1));
    CHECK(parts[0].as_struct()["Metadata"].as_string() == "m");
    CHECK(parts[1].as_struct()["CommittedOffset"].as_int() == -1);

    auto refused = received(
        kafka::offset_fetch_api, req,
        offset_fetch_response_body(failed<group_offsets>(errc::coordinator_load_in_progress), call,
                                   version));
    CHECK(code_of(refused["ErrorCode"]) == (version >= 2 ? 14 : 0));
    const auto& rparts = refused["Topics"].as_array().at(0).as_struct()["Partitions"].as_array();
    REQUIRE(rparts.size() == 2);
    CHECK(code_of(rparts[0].as_struct()["ErrorCode"]) == 14);

    if (version >= 2) {
      auto all = request_body(kafka::offset_fetch_api);
      all["GroupId"] = value("g1");
      all["Topics"] = value(kafka::null_value{});
      CHECK(offset_fetch_call(sent(kafka::offset_fetch_api, version, all).body).entries.empty());
    }
  }
}

TEST_CASE("DescribeGroups, ListGroups and DeleteGroups answer each group", "[gateway][kafka]") {
  group_summary g;
  g.state = "Stable";
  g.protocol_type = "consumer";
  g.protocol_name = "range";
  g.generation = 2;
  g.leader = "cli-a";
  group_member_summary m;
  m.member_id = "cli-a";
  m.client_id = "cli";
  m.assignment = some_bytes(9);
  g.members = {m};
  for (int16_t version = 0; version <= 5; ++version) {
    INFO("DescribeGroups version " << version);
    auto body = request_body(kafka::describe_groups_api);
    body["Groups"] = value(value::array_type{value("g1"), value("g2")});
    auto req = sent(kafka::describe_groups_api, version, body);
    auto out = received(kafka::describe_groups_api, req,
                        describe_groups_response_body(
                            {"g1", "g2"}, {answer<group_summary>{g, {}},
                                           failed<group_summary>(errc::not_coordinator)}));
    const auto& groups = out["Groups"].as_array();
    REQUIRE(groups.size() == 2);
    const auto& g1 = groups[0].as_struct();
    CHECK(g1["GroupState"].as_string() == "Stable");
    CHECK(g1["ProtocolData"].as_string() == "range");
    CHECK(g1["Members"].as_array().at(0).as_struct()["MemberAssignment"].as_bytes() ==
          some_bytes(9));
    CHECK(code_of(groups[1].as_struct()["ErrorCode"]) == 16);
  }
  group_summary empty;
  empty.state = "Empty";
  for (int16_t version = 0; version <= 4; ++version) {
    INFO("ListGroups version " << version);
    auto body = request_body(kafka::list_groups_api);
    if (version >= 4) body["StatesFilter"] = value(value::array_type{value("stable")});
    auto req = sent(kafka::list_groups_api, version, body);
    std::vector<std::string> states;
    for (const auto& v : req.body["StatesFilter"].as_array()) states.push_back(v.as_string());
    CHECK(states.size() == (version >= 4 ? 1u : 0u));
    auto out = received(kafka::list_groups_api, req,
                        list_groups_response_body(
                            answer<std::vector<std::string>>{{"a", "b"}, {}},
                            {answer<group_summary>{g, {}}, answer<group_summary>{empty, {}}},
                            states));
    CHECK(code_of(out["ErrorCode"]) == 0);
    const auto& listed = out["Groups"].as_array();
    REQUIRE(listed.size() == (version >= 4 ? 1u : 2u));
    CHECK(listed[0].as_struct()["GroupId"].as_string() == "a");
    CHECK(listed[0].as_struct()["ProtocolType"].as_string() == "consumer");
    if (version >= 4) CHECK(listed[0].as_struct()["GroupState"].as_string() == "Stable");
  }
  for (int16_t version = 0; version <= 2; ++version) {
    INFO("DeleteGroups version " << version);
    auto body = request_body(kafka::delete_groups_api);
    body["GroupsNames"] = value(value::array_type{value("g1"), value("g2")});
    auto req = sent(kafka::delete_groups_api, version, body);
    auto out = received(kafka::delete_groups_api, req,
                        delete_groups_response_body(
                            {"g1", "g2"}, {answer<bool>{true, {}}, failed<bool>(errc::group_not_empty)}));
    const auto& results = out["Results"].as_array();
    REQUIRE(results.size() == 2);
    CHECK(code_of(results[0].as_struct()["ErrorCode"]) == 0);
    CHECK(code_of(results[1].as_struct()["ErrorCode"]) == 68);
  }
}
