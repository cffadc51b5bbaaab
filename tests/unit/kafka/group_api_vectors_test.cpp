// Byte-exact bodies of the consumer-group APIs, derived by hand from Kafka's message
// definitions (each field annotated), one in a classic and one in a flexible version of each
// API: they decode to the values written beside them and encode back to the same bytes.

#include <catch2/catch.hpp>

#include "runtime/kafka/api_schemas.hpp"
#include "tests/support/kafka_vector.hpp"

namespace capstan::kafka {
namespace {

constexpr auto request = message_kind::request;
constexpr auto response = message_kind::response;

} // namespace

TEST_CASE("JoinGroup v5 request and v7 response by hand", "[kafka]") {
  const auto req = decode_vector(join_group_api, request, 5,
                                 from_hex("0001 67"                   // GroupId "g"
                                          "00002710"                  // SessionTimeoutMs 10000
                                          "00007530"                  // RebalanceTimeoutMs 30000
                                          "0000"                      // MemberId ""
                                          "ffff"                      // GroupInstanceId null
                                          "0008 636f6e73756d6572"     // ProtocolType "consumer"
                                          "00000001"                  // Protocols: 1
                                          "0005 72616e6765"           //   Name "range"
                                          "00000002 0001"));          //   Metadata 00 01
  CHECK(req["GroupId"].as_string() == "g");
  CHECK(req["SessionTimeoutMs"].as_int() == 10000);
  CHECK(req["RebalanceTimeoutMs"].as_int() == 30000);
  CHECK(req["MemberId"].as_string().empty());
  CHECK(req["GroupInstanceId"].is_null());
  CHECK(req["ProtocolType"].as_string() == "consumer");
  const auto& protocol = req["Protocols"].as_array().at(0).as_struct();
  CHECK(protocol["Name"].as_string() == "range");
  CHECK(protocol["Metadata"].as_bytes() == bytes{0x00, 0x01});

  const auto resp = decode_vector(join_group_api, response, 7,
                                  from_hex("00000000"                 // ThrottleTimeMs
                                           "0000"                     // ErrorCode
                                           "00000001"                 // GenerationId 1
                                           "09 636f6e73756d6572"      // ProtocolType "consumer"
                                           "06 72616e6765"            // ProtocolName "range"
                                           "03 6d31"                  // Leader "m1"
                                           "03 6d31"                  // MemberId "m1"
                                           "02"                       // Members: 1
                                           "03 6d31"                  //   MemberId "m1"
                                           "00"                       //   GroupInstanceId null
                                           "02 ff"                    //   Metadata ff
                                           "00"                       //   tags: none
                                           "00"));                    // tags: none
  CHECK(resp["GenerationId"].as_int() == 1);
  CHECK(resp["ProtocolType"].as_string() == "consumer");
  CHECK(resp["ProtocolName"].as_string() == "range");
  CHECK(resp["Leader"].as_string() == "m1");
  const auto& member = resp["Members"].as_array().at(0).as_struct();
  CHECK(member["GroupInstanceId"].is_null());
  CHECK(member["Metadata"].as_bytes() == bytes{0xff});
}

TEST_CASE("SyncGroup v3 request and v5 response by hand", "[kafka]") {
  const auto req = decode_vector(sync_group_api, request, 3,
                                 from_hex("0001 67"                   // GroupId "g"
                                          "00000001"                  // GenerationId 1
                                          "0002 6d31"                 // MemberId "m1"
                                          "0001 69"                   // GroupInstanceId "i"
                                          "00000001"                  // Assignments: 1
                                          "0002 6d31"                 //   MemberId "m1"
                                          "00000002 abcd"));          //   Assignment ab cd
  CHECK(req["GenerationId"].as_int() == 1);
  CHECK(req["GroupInstanceId"].as_string() == "i");
  const auto& assignment = req["Assignments"].as_array().at(0).as_struct();
  CHECK(assignment["MemberId"].as_string() == "m1");
  CHECK(assignment["Assignment"].as_bytes() == bytes{0xab, 0xcd});

  const auto resp = decode_vector(sync_group_api, response, 5,
                                  from_hex("00000000"                 // ThrottleTimeMs
                                           "0000"                     // ErrorCode
                                           "09 636f6e73756d6572"      // ProtocolType "consumer"
                                           "06 72616e6765"            // ProtocolName "range"
                                           "03 abcd"                  // Assignment ab cd
                                           "00"));                    // tags: none
  CHECK(resp["ProtocolType"].as_string() == "consumer");
  CHECK(resp["ProtocolName"].as_string() == "range");
  CHECK(resp["Assignment"].as_bytes() == bytes{0xab, 0xcd});
}

TEST_CASE("Heartbeat v3 request and v4 response by hand", "[kafka]") {
  const auto req = decode_vector(heartbeat_api, request, 3,
                                 from_hex("0001 67"                   // GroupId "g"
                                          "00000002"                  // GenerationId 2
                                          "0002 6d31"                 // MemberId "m1"
                                          "ffff"));                   // GroupInstanceId null
  CHECK(req["GenerationId"].as_int() == 2);
  CHECK(req["MemberId"].as_string() == "m1");
  CHECK(req["GroupInstanceId"].is_null());

  const auto resp = decode_vector(heartbeat_api, response, 4,
                                  from_hex("00000000"                 // ThrottleTimeMs
                                           "001b"                     // REBALANCE_IN_PROGRESS
                                           "00"));                    // tags: none
  CHECK(resp["ErrorCode"].as_int() == 27);
}

TEST_CASE("LeaveGroup v2 request with one member and v4 with a list", "[kafka]") {
  const auto v2 = decode_vector(leave_group_api, request, 2,
                                from_hex("0001 67"                    // GroupId "g"
                                         "0002 6d31"));               // MemberId "m1"
  CHECK(v2["MemberId"].as_string() == "m1");
  CHECK(v2["Members"].as_array().empty());

  const auto v4 = decode_vector(leave_group_api, request, 4,
                                from_hex("02 67"                      // GroupId "g"
                                         "02"                         // Members: 1
                                         "03 6d31"                    //   MemberId "m1"
                                         "00"                         //   GroupInstanceId null
                                         "00"                         //   tags: none
                                         "00"));                      // tags: none
  const auto& member = v4["Members"].as_array().at(0).as_struct();
  CHECK(member["MemberId"].as_string() == "m1");
  CHECK(member["GroupInstanceId"].is_null());
}

TEST_CASE("OffsetCommit v2 request and v8 response by hand", "[kafka]") {
  const auto req = decode_vector(offset_commit_api, request, 2,
                                 from_hex("0001 67"                   // GroupId "g"
                                          "00000001"                  // GenerationIdOrMemberEpoch
                                          "0002 6d31"                 // MemberId "m1"
                                          "ffffffffffffffff"          // RetentionTimeMs -1
                                          "00000001"                  // Topics: 1
                                          "0001 74"                   //   Name "t"
                                          "00000001"                  //   Partitions: 1
                                          "00000000"                  //     PartitionIndex 0
                                          "000000000000002a"          //     CommittedOffset 42
                                          "ffff"));                   //     CommittedMetadata null
  CHECK(req["GenerationIdOrMemberEpoch"].as_int() == 1);
  CHECK(req["RetentionTimeMs"].as_int() == -1);
  const auto& topic = req["Topics"].as_array().at(0).as_struct();
  const auto& partition = topic["Partitions"].as_array().at(0).as_struct();
  CHECK(topic["Name"].as_string() == "t");
  CHECK(partition["CommittedOffset"].as_int() == 42);
  CHECK(partition["CommittedLeaderEpoch"].as_int() == -1); // absent before v6: the default
  CHECK(partition["CommittedMetadata"].is_null());

  const auto resp = decode_vector(offset_commit_api, response, 8,
                                  from_hex("00000000"                 // ThrottleTimeMs
                                           "02"                       // Topics: 1
                                           "02 74"                    //   Name "t"
                                           "02"                       //   Partitions: 1
                                           "00000003 0000 00"         //     3, no error, no tags
                                           "00"                       //   tags: none
                                           "00"));                    // tags: none
  const auto& committed = resp["Topics"].as_array().at(0).as_struct();
  CHECK(committed["Partitions"].as_array().at(0).as_struct()["PartitionIndex"].as_int() == 3);
}

TEST_CASE("OffsetFetch v1 request and v7 request for every topic", "[kafka]") {
  const auto v1 = decode_vector(offset_fetch_api, request, 1,
                                from_hex("0001 67"                    // GroupId "g"
                                         "00000001"                   // Topics: 1
                                         "0001 74"                    //   Name "t"
                                         "00000002 00000000 00000001")); // PartitionIndexes 0, 1
  const auto& topic = v1["Topics"].as_array().at(0).as_struct();
  CHECK(topic["PartitionIndexes"].as_array() == value::array_type{int64_t{0}, int64_t{1}});

  const auto v7 = decode_vector(offset_fetch_api, request, 7,
                                from_hex("02 67"                      // GroupId "g"
                                         "00"                         // Topics null: all
                                         "01"                         // RequireStable true
                                         "00"));                      // tags: none
  CHECK(v7["Topics"].is_null());
  CHECK(v7["RequireStable"].as_bool());
}

TEST_CASE("DescribeGroups v0 request and v5 response by hand", "[kafka]") {
  const auto req = decode_vector(describe_groups_api, request, 0,
                                 from_hex("00000001 0001 67"));       // Groups ["g"]
  CHECK(req["Groups"].as_array() == value::array_type{std::string("g")});

  const auto resp = decode_vector(describe_groups_api, response, 5,
                                  from_hex("00000000"                 // ThrottleTimeMs
                                           "02"                       // Groups: 1
                                           "0000"                     //   ErrorCode
                                           "02 67"                    //   GroupId "g"
                                           "07 537461626c65"          //   GroupState "Stable"
                                           "09 636f6e73756d6572"      //   ProtocolType "consumer"
                                           "06 72616e6765"            //   ProtocolData "range"
                                           "02"                       //   Members: 1
                                           "03 6d31"                  //     MemberId "m1"
                                           "00"                       //     GroupInstanceId null
                                           "03 6331"                  //     ClientId "c1"
                                           "02 68"                    //     ClientHost "h"
                                           "01"                       //     MemberMetadata empty
                                           "01"                       //     MemberAssignment empty
                                           "00"                       //     tags: none
                                           "80000000"                 //   AuthorizedOperations
                                           "00"                       //   tags: none
                                           "00"));                    // tags: none
  const auto& group = resp["Groups"].as_array().at(0).as_struct();
  CHECK(group["GroupState"].as_string() == "Stable");
  CHECK(group["ProtocolData"].as_string() == "range");
  CHECK(group["AuthorizedOperations"].as_int() == -2147483648LL);
  const auto& member = group["Members"].as_array().at(0).as_struct();
  CHECK(member["ClientId"].as_string() == "c1");
  CHECK(member["ClientHost"].as_string() == "h");
  CHECK(member["MemberAssignment"].as_bytes().empty());
}

TEST_CASE("ListGroups v0 response and v4 request with a state filter", "[kafka]") {
  const auto resp = decode_vector(list_groups_api, response, 0,
                                  from_hex("0000"                     // ErrorCode
                                           "00000001"                 // Groups: 1
                                           "0001 67"                  //   GroupId "g"
                                           "0008 636f6e73756d6572")); //   ProtocolType "consumer"
  const auto& group = resp["Groups"].as_array().at(0).as_struct();
  CHECK(group["GroupId"].as_string() == "g");
  CHECK(group["ProtocolType"].as_string() == "consumer");

  const auto req = decode_vector(list_groups_api, request, 4,
                                 from_hex("02 07 537461626c65"        // StatesFilter ["Stable"]
                                          "00"));                     // tags: none
  CHECK(req["StatesFilter"].as_array() == value::array_type{std::string("Stable")});
}

TEST_CASE("DeleteGroups v0 request and v2 response by hand", "[kafka]") {
  const auto req = decode_vector(delete_groups_api, request, 0,
                                 from_hex("00000002 0001 61 0001 62")); // GroupsNames a, b
  CHECK(req["GroupsNames"].as_array() ==
        value::array_type{std::string("a"), std::string("b")});

  const auto resp = decode_vector(delete_groups_api, response, 2,
                                  from_hex("00000000"                 // ThrottleTimeMs
                                           "02"                       // Results: 1
                                           "02 61"                    //   GroupId "a"
                                           "0045"                     //   GROUP_ID_NOT_FOUND
                                           "00"                       //   tags: none
                                           "00"));                    // tags: none
  const auto& result = resp["Results"].as_array().at(0).as_struct();
  CHECK(result["GroupId"].as_string() == "a");
  CHECK(result["ErrorCode"].as_int() == 69);
}

} // namespace capstan::kafka
