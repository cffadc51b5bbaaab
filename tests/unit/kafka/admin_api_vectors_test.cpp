// Byte-exact bodies of the producer-id, topic-administration and leader-epoch APIs, derived by
// hand from Kafka's message definitions (each field annotated), one in a classic and one in a
// flexible version of each API: they decode to the values written beside them and encode back
// to the same bytes.

#include <catch2/catch.hpp>

#include "runtime/kafka/api_schemas.hpp"
#include "tests/support/kafka_vector.hpp"

namespace capstan::kafka {
namespace {

constexpr auto request = message_kind::request;
constexpr auto response = message_kind::response;

} // namespace

TEST_CASE("InitProducerId v0 request and v4 response by hand", "[kafka]") {
  const auto req = decode_vector(init_producer_id_api, request, 0,
                                 from_hex("ffff"                      // TransactionalId null
                                          "0000ea60"));               // TransactionTimeoutMs
  CHECK(req["TransactionalId"].is_null());
  CHECK(req["TransactionTimeoutMs"].as_int() == 60000);
  CHECK(req["ProducerId"].as_int() == -1); // absent before v3: the default

  const auto resp = decode_vector(init_producer_id_api, response, 4,
                                  from_hex("00000000"                 // ThrottleTimeMs
                                           "0000"                     // ErrorCode
                                           "0000000000000007"         // ProducerId 7
                                           "0000"                     // ProducerEpoch 0
                                           "00"));                    // tags: none
  CHECK(resp["ProducerId"].as_int() == 7);
  CHECK(resp["ProducerEpoch"].as_int() == 0);
}

TEST_CASE("CreateTopics v2 request and v5 response with a tagged field", "[kafka]") {
  const auto req = decode_vector(create_topics_api, request, 2,
                                 from_hex("00000001"                  // Topics: 1
                                          "0001 74"                   //   Name "t"
                                          "00000003"                  //   NumPartitions 3
                                          "0001"                      //   ReplicationFactor 1
                                          "00000000"                  //   Assignments: none
                                          "00000001"                  //   Configs: 1
                                          "000e 636c65616e75702e706f6c696379" // cleanup.policy
                                          "0007 636f6d70616374"       //     Value "compact"
                                          "00007530"                  // timeoutMs 30000
                                          "00"));                     // validateOnly false
  const auto& topic = req["Topics"].as_array().at(0).as_struct();
  CHECK(topic["NumPartitions"].as_int() == 3);
  CHECK(topic["ReplicationFactor"].as_int() == 1);
  const auto& config = topic["Configs"].as_array().at(0).as_struct();
  CHECK(config["Name"].as_string() == "cleanup.policy");
  CHECK(config["Value"].as_string() == "compact");
  CHECK(req["timeoutMs"].as_int() == 30000);
  CHECK_FALSE(req["validateOnly"].as_bool());

  const auto resp = decode_vector(create_topics_api, response, 5,
                                  from_hex("00000000"                 // ThrottleTimeMs
                                           "02"                       // Topics: 1
                                           "02 74"                    //   Name "t"
                                           "0000"                     //   ErrorCode
                                           "00"                       //   ErrorMessage null
                                           "00000003"                 //   NumPartitions 3
                                           "0001"                     //   ReplicationFactor 1
                                           "00"                       //   Configs null
                                           "01 00 02 001d"            //   tag 0 (TopicConfig...) 29
                                           "00"));                    // tags: none
  const auto& result = resp["Topics"].as_array().at(0).as_struct();
  CHECK(result["ErrorMessage"].is_null());
  CHECK(result["NumPartitions"].as_int() == 3);
  CHECK(result["Configs"].is_null());
  CHECK(result["TopicConfigErrorCode"].as_int() == 29);
}

TEST_CASE("DeleteTopics v1 request by name and v6 request by topic id", "[kafka]") {
  const auto v1 = decode_vector(delete_topics_api, request, 1,
                                from_hex("00000001 0001 74"           // TopicNames ["t"]
                                         "00007530"));                // TimeoutMs 30000
  CHECK(v1["TopicNames"].as_array() == value::array_type{std::string("t")});
  CHECK(v1["TimeoutMs"].as_int() == 30000);

  const auto v6 = decode_vector(delete_topics_api, request, 6,
                                from_hex("02"                         // Topics: 1
                                         "00"                         //   Name null
                                         "000102030405060708090a0b0c0d0e0f" // TopicId
                                         "00"                         //   tags: none
                                         "00007530"                   // TimeoutMs 30000
                                         "00"));                      // tags: none
  const auto& topic = v6["Topics"].as_array().at(0).as_struct();
  CHECK(topic["Name"].is_null());
  const uuid_bytes id{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  CHECK(topic["TopicId"] == value(id));
}

TEST_CASE("CreatePartitions v0 request and v2 response by hand", "[kafka]") {
  const auto req = decode_vector(create_partitions_api, request, 0,
                                 from_hex("00000001"                  // Topics: 1
                                          "0001 74"                   //   Name "t"
                                          "00000004"                  //   Count 4
                                          "ffffffff"                  //   Assignments null
                                          "00007530"                  // TimeoutMs 30000
                                          "01"));                     // ValidateOnly true
  const auto& topic = req["Topics"].as_array().at(0).as_struct();
  CHECK(topic["Count"].as_int() == 4);
  CHECK(topic["Assignments"].is_null());
  CHECK(req["ValidateOnly"].as_bool());

  const auto resp = decode_vector(create_partitions_api, response, 2,
                                  from_hex("00000000"                 // ThrottleTimeMs
                                           "02"                       // Results: 1
                                           "02 74"                    //   Name "t"
                                           "0025"                     //   INVALID_PARTITIONS
                                           "03 6e6f"                  //   ErrorMessage "no"
                                           "00"                       //   tags: none
                                           "00"));                    // tags: none
  const auto& result = resp["Results"].as_array().at(0).as_struct();
  CHECK(result["ErrorCode"].as_int() == 37);
  CHECK(result["ErrorMessage"].as_string() == "no");
}

TEST_CASE("DescribeConfigs v1 request and v4 response by hand", "[kafka]") {
  const auto req = decode_vector(describe_configs_api, request, 1,
                                 from_hex("00000001"                  // Resources: 1
                                          "02"                        //   ResourceType topic
                                          "0001 74"                   //   ResourceName "t"
                                          "ffffffff"                  //   ConfigurationKeys null
                                          "00"));                     // IncludeSynonyms false
  const auto& resource = req["Resources"].as_array().at(0).as_struct();
  CHECK(resource["ResourceType"].as_int() == 2);
  CHECK(resource["ConfigurationKeys"].is_null());

  const auto resp = decode_vector(describe_configs_api, response, 4,
                                  from_hex("00000000"                 // ThrottleTimeMs
                                           "02"                       // Results: 1
                                           "0000"                     //   ErrorCode
                                           "00"                       //   ErrorMessage null
                                           "02"                       //   ResourceType topic
                                           "02 74"                    //   ResourceName "t"
                                           "02"                       //   Configs: 1
                                           "0f 636c65616e75702e706f6c696379" // cleanup.policy
                                           "08 636f6d70616374"        //     Value "compact"
                                           "00"                       //     ReadOnly false
                                           "01"                       //     ConfigSource 1
                                           "00"                       //     IsSensitive false
                                           "01"                       //     Synonyms: none
                                           "02"                       //     ConfigType STRING
                                           "00"                       //     Documentation null
                                           "00"                       //     tags: none
                                           "00"                       //   tags: none
                                           "00"));                    // tags: none
  const auto& config = resp["Results"].as_array().at(0).as_struct()["Configs"].as_array().at(0)
                           .as_struct();
  CHECK(config["Name"].as_string() == "cleanup.policy");
  CHECK(config["Value"].as_string() == "compact");
  CHECK(config["ConfigSource"].as_int() == 1);
  CHECK(config["ConfigType"].as_int() == 2);
  CHECK(config["Documentation"].is_null());
}

TEST_CASE("OffsetForLeaderEpoch v2 request and v4 response by hand", "[kafka]") {
  const auto req = decode_vector(offset_for_leader_epoch_api, request, 2,
                                 from_hex("00000001"                  // Topics: 1
                                          "0001 74"                   //   Topic "t"
                                          "00000001"                  //   Partitions: 1
                                          "00000000"                  //     Partition 0
                                          "00000005"                  //     CurrentLeaderEpoch 5
                                          "00000004"));               //     LeaderEpoch 4
  CHECK(req["ReplicaId"].as_int() == -2); // absent before v3: a consumer
  const auto& partition =
      req["Topics"].as_array().at(0).as_struct()["Partitions"].as_array().at(0).as_struct();
  CHECK(partition["CurrentLeaderEpoch"].as_int() == 5);
  CHECK(partition["LeaderEpoch"].as_int() == 4);

  const auto resp = decode_vector(offset_for_leader_epoch_api, response, 4,
                                  from_hex("00000000"                 // ThrottleTimeMs
                                           "02"                       // Topics: 1
                                           "02 74"                    //   Topic "t"
                                           "02"                       //   Partitions: 1
                                           "0000"                     //     ErrorCode
                                           "00000000"                 //     Partition 0
                                           "00000004"                 //     LeaderEpoch 4
                                           "000000000000000a"         //     EndOffset 10
                                           "00"                       //     tags: none
                                           "00"                       //   tags: none
                                           "00"));                    // tags: none
  const auto& end =
      resp["Topics"].as_array().at(0).as_struct()["Partitions"].as_array().at(0).as_struct();
  CHECK(end["LeaderEpoch"].as_int() == 4);
  CHECK(end["EndOffset"].as_int() == 10);
}

} // namespace capstan::kafka
