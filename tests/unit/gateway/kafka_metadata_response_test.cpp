// The Kafka Metadata response built from the cluster as a node knows it
// (actors/gateway/kafka/kafka_metadata_response): brokers at their advertised Kafka listeners,
// a controller id that names a listed broker, and Kafka's error codes per topic and partition.

#include "actors/gateway/kafka/kafka_metadata_response.hpp"

#include <catch2/catch.hpp>

#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/message_codec.hpp"

using namespace capstan;

namespace {

cluster_metadata two_brokers() {
  cluster_metadata md;
  md.cluster_id = "c1";
  md.controller_id = 3;
  broker_info a;
  a.node_id = 2;
  a.host = "10.0.0.2";
  a.port = 9192;
  a.kafka_host = "kafka2.example";
  a.kafka_port = 9092;
  broker_info b = a;
  b.node_id = 1;
  b.kafka_host = "kafka1.example";
  broker_info no_kafka = a;
  no_kafka.node_id = 4;
  no_kafka.kafka_port = 0;
  md.brokers = {a, b, no_kafka};
  topic_metadata t;
  t.name = "orders";
  partition_assignment led;
  led.partition = 0;
  led.replicas = {2, 5};
  led.isr = {2};
  led.leader = 2;
  led.leader_epoch = 4;
  partition_assignment orphan;
  orphan.partition = 1;
  orphan.replicas = {5};
  orphan.isr = {5};
  orphan.leader = 5;
  t.partitions = {led, orphan};
  md.topics["orders"] = t;
  return md;
}

kafka::struct_value request_for(std::vector<std::string> topics, bool all) {
  auto req = kafka::make_message(kafka::metadata_api, kafka::message_kind::request);
  if (all) {
    req["Topics"] = kafka::value(kafka::null_value{});
    return req;
  }
  kafka::value::array_type list;
  for (auto& name : topics) {
    kafka::struct_value e(kafka::metadata_api.request[0].fields);
    e["Name"] = kafka::value(name);
    list.emplace_back(std::move(e));
  }
  req["Topics"] = kafka::value(std::move(list));
  return req;
}

} // namespace

TEST_CASE("Kafka metadata lists brokers at their Kafka listeners and names a listed controller",
          "[gateway][kafka]") {
  auto body = metadata_response(request_for({}, true), 9, two_brokers());
  const auto& brokers = body["Brokers"].as_array();
  REQUIRE(brokers.size() == 2);
  CHECK(brokers[0].as_struct()["NodeId"].as_int() == 2);
  CHECK(brokers[0].as_struct()["Host"].as_string() == "kafka2.example");
  CHECK(brokers[0].as_struct()["Port"].as_int() == 9092);
  // The active controller (3) is no listed broker: the lowest listed id stands in.
  CHECK(body["ControllerId"].as_int() == 1);
  CHECK(body["ClusterId"].as_string() == "c1");
  bytes out;
  CHECK(kafka::encode_message(kafka::metadata_api, kafka::message_kind::response, 9, body, out).ok());
}

TEST_CASE("Kafka metadata answers a partition without a live leader LEADER_NOT_AVAILABLE and "
          "its dead replicas offline",
          "[gateway][kafka]") {
  auto body = metadata_response(request_for({}, true), 9, two_brokers());
  const auto& parts = body["Topics"].as_array().at(0).as_struct()["Partitions"].as_array();
  REQUIRE(parts.size() == 2);
  const auto& led = parts[0].as_struct();
  CHECK(led["ErrorCode"].as_int() == 0);
  CHECK(led["LeaderId"].as_int() == 2);
  CHECK(led["LeaderEpoch"].as_int() == 4);
  CHECK(led["OfflineReplicas"].as_array() == kafka::value::array_type{kafka::value(int64_t{5})});
  const auto& orphan = parts[1].as_struct();
  CHECK(orphan["ErrorCode"].as_int() == 5);
  CHECK(orphan["LeaderId"].as_int() == -1);
}

TEST_CASE("Kafka metadata answers topics in the order asked with Kafka's codes for missing ones",
          "[gateway][kafka]") {
  auto body = metadata_response(request_for({"nosuch", "orders", "bad/name"}, false), 9,
                                two_brokers());
  const auto& topics = body["Topics"].as_array();
  REQUIRE(topics.size() == 3);
  CHECK(topics[0].as_struct()["ErrorCode"].as_int() == 3);
  CHECK(topics[1].as_struct()["Name"].as_string() == "orders");
  CHECK(topics[2].as_struct()["ErrorCode"].as_int() == 17);
}

TEST_CASE("Kafka metadata v0 reads an empty topic list as every topic, v1 and later as none",
          "[gateway][kafka]") {
  CHECK(metadata_response(request_for({}, false), 0, two_brokers())["Topics"].as_array().size() == 1);
  CHECK(metadata_response(request_for({}, false), 1, two_brokers())["Topics"].as_array().empty());
}
