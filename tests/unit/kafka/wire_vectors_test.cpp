// Byte-exact frames derived by hand from Kafka's protocol documentation (each byte annotated),
// and one captured from a real client: the first frame `kcat -L` (librdkafka 2.0.2) sends, its
// ApiVersions v3 request, recorded by a python3 socket server on 127.0.0.1.

#include <string>

#include <catch2/catch.hpp>

#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/frame.hpp"
#include "runtime/kafka/message_header.hpp"
#include "tests/support/kafka_vector.hpp"

namespace capstan::kafka {
namespace {

// The frame's contents after its size prefix, which must match.
bytes_view unframed(const bytes& frame) {
  auto cut = next_frame(frame, 1 << 20);
  REQUIRE(cut.ok());
  REQUIRE(cut->consumed == frame.size());
  return cut->frame;
}

struct_value api_version_entry(int16_t key, int16_t min, int16_t max) {
  struct_value e(api_versions_api.response[1].fields);
  e["ApiKey"] = int64_t{key};
  e["MinVersion"] = int64_t{min};
  e["MaxVersion"] = int64_t{max};
  return e;
}

bytes framed(const bytes& contents) {
  bytes out;
  const size_t at = begin_frame(out);
  out.insert(out.end(), contents.begin(), contents.end());
  end_frame(out, at);
  return out;
}

} // namespace

TEST_CASE("ApiVersions v0 request: header v1 and an empty body", "[kafka]") {
  const bytes frame = from_hex("0000000c"    // size 12
                               "0012 0000"   // api key 18, version 0
                               "00000007"    // correlation id 7
                               "0002 636c"); // client id "cl"
  auto req = decode_request(unframed(frame));
  REQUIRE(req.ok());
  CHECK(req->header == request_header{18, 0, 7, "cl", {}});
  bytes out;
  REQUIRE(encode_request(req->header, req->body, out).ok());
  CHECK(framed(out) == frame);
}

TEST_CASE("ApiVersions v0 response: an int32 array of (key, min, max)", "[kafka]") {
  const bytes frame = from_hex("00000016"           // size 22
                               "00000007"           // correlation id (header v0)
                               "0000"               // ErrorCode
                               "00000002"           // ApiKeys: 2
                               "0012 0000 0003"     // ApiVersions 0-3
                               "0003 0000 0009");   // Metadata 0-9
  auto body = make_message(api_versions_api, message_kind::response);
  body["ApiKeys"] = value::array_type{api_version_entry(18, 0, 3), api_version_entry(3, 0, 9)};
  bytes out;
  REQUIRE(encode_response(api_versions_api, 0, 7, body, out).ok());
  CHECK(framed(out) == frame);
  auto back = decode_response(api_versions_api, 0, unframed(frame));
  REQUIRE(back.ok());
  CHECK(back->correlation_id == 7);
  CHECK(back->body == body);
}

TEST_CASE("ApiVersions v3 request as librdkafka 2.0.2 (kcat -L) sends it", "[kafka]") {
  const bytes captured =
      from_hex("000000240012000300000001000772646b61666b61000b6c696272646b61666b"
               "6106322e302e3200");
  // The same frame by hand: header v2 (flexible), body with compact strings.
  const bytes by_hand = from_hex("00000024"                       // size 36
                                 "0012 0003"                      // api key 18, version 3
                                 "00000001"                       // correlation id 1
                                 "0007 72646b61666b61"            // client id "rdkafka" (int16)
                                 "00"                             // header tags: none
                                 "0b 6c696272646b61666b61"        // "librdkafka" (compact)
                                 "06 322e302e32"                  // "2.0.2" (compact)
                                 "00");                           // body tags: none
  CHECK(by_hand == captured);
  auto req = decode_request(unframed(captured));
  REQUIRE(req.ok());
  CHECK(req->header == request_header{18, 3, 1, "rdkafka", {}});
  CHECK(req->body["ClientSoftwareName"].as_string() == "librdkafka");
  CHECK(req->body["ClientSoftwareVersion"].as_string() == "2.0.2");
  bytes out;
  REQUIRE(encode_request(req->header, req->body, out).ok());
  CHECK(framed(out) == captured);
}

TEST_CASE("ApiVersions v3 response: header v0, compact array, tagged fields", "[kafka]") {
  const bytes frame = from_hex("00000027"                // size 39
                               "00000001"                // correlation id (header v0 always)
                               "0000"                    // ErrorCode
                               "03"                      // ApiKeys: 2 (compact: n + 1)
                               "0012 0000 0003 00"       // ApiVersions 0-3, no tags
                               "0003 0000 0009 00"       // Metadata 0-9, no tags
                               "00000000"                // ThrottleTimeMs
                               "02"                      // 2 tagged fields
                               "01 08 0000000000000005"  // tag 1 FinalizedFeaturesEpoch = 5
                               "03 01 01");              // tag 3 ZkMigrationReady = true
  auto body = make_message(api_versions_api, message_kind::response);
  body["ApiKeys"] = value::array_type{api_version_entry(18, 0, 3), api_version_entry(3, 0, 9)};
  body["FinalizedFeaturesEpoch"] = int64_t{5};
  body["ZkMigrationReady"] = true;
  bytes out;
  REQUIRE(encode_response(api_versions_api, 3, 1, body, out).ok());
  CHECK(framed(out) == frame);
  auto back = decode_response(api_versions_api, 3, unframed(frame));
  REQUIRE(back.ok());
  CHECK(back->body == body);
}

TEST_CASE("Metadata v1 request: a nullable topic array", "[kafka]") {
  const bytes frame = from_hex("00000016"        // size 22
                               "0003 0001"       // api key 3, version 1
                               "0000002a"        // correlation id 42
                               "ffff"            // client id null
                               "00000001"        // Topics: 1
                               "0006 6f7264657273"); // Name "orders"
  auto req = decode_request(unframed(frame));
  REQUIRE(req.ok());
  CHECK(req->header == request_header{3, 1, 42, std::nullopt, {}});
  const auto& topics = req->body["Topics"].as_array();
  REQUIRE(topics.size() == 1);
  CHECK(topics[0].as_struct()["Name"].as_string() == "orders");

  const bytes all_topics = from_hex("0003 0001 0000002a ffff ffffffff");
  auto all = decode_request(all_topics);
  REQUIRE(all.ok());
  CHECK(all->body["Topics"].is_null());
}

TEST_CASE("Metadata v9 response: header v1, compact forms, an unknown tag kept", "[kafka]") {
  const bytes frame = from_hex(
      "00000059"                   // size 89
      "0000002a 00"                // correlation id 42, header tags: none (header v1)
      "00000000"                   // ThrottleTimeMs
      "02"                         // Brokers: 1
      "00000001"                   //   NodeId 1
      "0a 6c6f63616c686f7374"      //   Host "localhost"
      "00002384"                   //   Port 9092
      "00"                         //   Rack null
      "00"                         //   tags: none
      "03 6331"                    // ClusterId "c1"
      "00000001"                   // ControllerId 1
      "02"                         // Topics: 1
      "0000"                       //   ErrorCode
      "07 6f7264657273"            //   Name "orders"
      "00"                         //   IsInternal false
      "02"                         //   Partitions: 1
      "0000 00000000 00000001"     //     ErrorCode, PartitionIndex 0, LeaderId 1
      "00000005"                   //     LeaderEpoch 5
      "02 00000001"                //     ReplicaNodes [1]
      "02 00000001"                //     IsrNodes [1]
      "01"                         //     OfflineReplicas []
      "00"                         //     tags: none
      "80000000"                   //   TopicAuthorizedOperations: unknown
      "00"                         //   tags: none
      "80000000"                   // ClusterAuthorizedOperations: unknown
      "01 05 02 abcd");            // 1 tagged field: tag 5, 2 bytes, not described
  auto back = decode_response(metadata_api, 9, unframed(frame));
  REQUIRE(back.ok());
  CHECK(back->correlation_id == 42);
  const auto& m = back->body;
  const auto& broker = m["Brokers"].as_array().at(0).as_struct();
  CHECK(broker["Host"].as_string() == "localhost");
  CHECK(broker["Port"].as_int() == 9092);
  CHECK(broker["Rack"].is_null());
  CHECK(m["ClusterId"].as_string() == "c1");
  const auto& partition =
      m["Topics"].as_array().at(0).as_struct()["Partitions"].as_array().at(0).as_struct();
  CHECK(partition["LeaderEpoch"].as_int() == 5);
  CHECK(partition["IsrNodes"].as_array() == value::array_type{int64_t{1}});
  CHECK(m["ClusterAuthorizedOperations"].as_int() == -2147483648LL);
  REQUIRE(m.unknown_tags().size() == 1);
  CHECK(m.unknown_tags()[0] == unknown_tag{5, {0xab, 0xcd}});

  bytes out;
  REQUIRE(encode_response(metadata_api, 9, 42, m, out).ok());
  CHECK(framed(out) == frame);
}

} // namespace capstan::kafka
