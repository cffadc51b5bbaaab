// The description-driven codec: every described message round trips at every version, a
// truncated message fails with a named error at every cut, unknown tagged fields are skipped
// and kept, and lengths the input cannot hold fail before anything is allocated for them.

#include <string>

#include <catch2/catch.hpp>

#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/message_codec.hpp"
#include "tests/support/kafka_sample.hpp"

namespace capstan::kafka {
namespace {

std::string label(const api_schema& api, message_kind kind, api_version version, uint32_t seed) {
  return std::string(api.name) + (kind == message_kind::request ? " request v" : " response v") +
         std::to_string(version) + " seed " + std::to_string(seed);
}

template <class Fn>
void for_each_message(Fn&& fn) {
  for (const api_schema* api : described_apis())
    for (api_version version = api->valid.from; version <= api->valid.to; ++version)
      for (auto kind : {message_kind::request, message_kind::response})
        for (uint32_t seed : {2u, 3u}) fn(*api, kind, version, seed);
}

} // namespace

TEST_CASE("every described message round trips at every version", "[kafka]") {
  int messages = 0;
  for_each_message([&](const api_schema& api, message_kind kind, api_version version,
                       uint32_t seed) {
    INFO(label(api, kind, version, seed));
    const auto sample = sample_message(api, kind, version, seed);
    bytes wire;
    REQUIRE(encode_message(api, kind, version, sample, wire).ok());
    auto decoded = decode_message(api, kind, version, wire);
    REQUIRE(decoded.ok());
    CHECK(*decoded == sample);
    bytes again;
    REQUIRE(encode_message(api, kind, version, *decoded, again).ok());
    CHECK(again == wire);
    ++messages;
  });
  // Versions described: Produce, Fetch, ListOffsets, Metadata, OffsetCommit, OffsetFetch,
  // FindCoordinator, JoinGroup, Heartbeat, LeaveGroup, SyncGroup, DescribeGroups, ListGroups,
  // ApiVersions, CreateTopics, DeleteTopics, InitProducerId, OffsetForLeaderEpoch,
  // DescribeConfigs, CreatePartitions, DeleteGroups.
  CHECK(messages == 2 * 2 * (6 + 8 + 5 + 10 + 7 + 7 + 4 + 8 + 5 + 5 + 6 + 6 + 5 + 4 + 6 + 6 +
                             5 + 3 + 4 + 4 + 3));
}

TEST_CASE("a message cut at any byte fails with CORRUPT_MESSAGE", "[kafka]") {
  for_each_message([](const api_schema& api, message_kind kind, api_version version,
                      uint32_t seed) {
    INFO(label(api, kind, version, seed));
    bytes wire;
    REQUIRE(encode_message(api, kind, version, sample_message(api, kind, version, seed), wire)
                .ok());
    for (size_t cut = 0; cut < wire.size(); ++cut) {
      auto decoded = decode_message(api, kind, version, bytes_view(wire).first(cut));
      INFO("cut at " << cut << " of " << wire.size());
      REQUIRE_FALSE(decoded.ok());
      CHECK(decoded.err().code == errc::corrupt_message);
    }
    wire.push_back(0);
    auto longer = decode_message(api, kind, version, wire);
    REQUIRE_FALSE(longer.ok());
    CHECK(longer.err().code == errc::corrupt_message);
  });
}

TEST_CASE("fields absent in a version are not written and decode as their defaults",
          "[kafka]") {
  auto request = make_message(metadata_api, message_kind::request);
  request["AllowAutoTopicCreation"] = false;
  request["IncludeTopicAuthorizedOperations"] = true;
  bytes v3;
  REQUIRE(encode_message(metadata_api, message_kind::request, 3, request, v3).ok());
  CHECK(v3 == bytes{0, 0, 0, 0}); // only the empty Topics array
  auto back = decode_message(metadata_api, message_kind::request, 3, v3);
  REQUIRE(back.ok());
  CHECK((*back)["AllowAutoTopicCreation"].as_bool()); // the default, true
  CHECK_FALSE((*back)["IncludeTopicAuthorizedOperations"].as_bool());
}

TEST_CASE("a version outside the description is UNSUPPORTED_VERSION", "[kafka]") {
  bytes wire;
  auto s = encode_message(produce_api, message_kind::request, 2,
                          make_message(produce_api, message_kind::request), wire);
  CHECK(s.code() == errc::unsupported_version);
  auto d = decode_message(fetch_api, message_kind::request, 12, bytes{});
  CHECK(d.code() == errc::unsupported_version);
}

TEST_CASE("null in a field not nullable in the version is refused both ways", "[kafka]") {
  auto request = make_message(metadata_api, message_kind::request);
  request["Topics"] = null_value{};
  bytes wire;
  CHECK(encode_message(metadata_api, message_kind::request, 0, request, wire).code() ==
        errc::invalid_request);
  const bytes null_topics{0xff, 0xff, 0xff, 0xff};
  CHECK(decode_message(metadata_api, message_kind::request, 0, null_topics).code() ==
        errc::corrupt_message);
  auto v1 = decode_message(metadata_api, message_kind::request, 1, null_topics);
  REQUIRE(v1.ok());
  CHECK((*v1)["Topics"].is_null());
}

TEST_CASE("a value out of its field's range is INVALID_REQUEST", "[kafka]") {
  auto request = make_message(produce_api, message_kind::request);
  request["Acks"] = int64_t{70000};
  bytes wire;
  CHECK(encode_message(produce_api, message_kind::request, 3, request, wire).code() ==
        errc::invalid_request);
  request["Acks"] = std::string("all");
  CHECK(encode_message(produce_api, message_kind::request, 3, request, wire).code() ==
        errc::invalid_request);
}

TEST_CASE("unknown tagged fields are skipped on read and written back", "[kafka]") {
  // FindCoordinator v3 request: Key "g" (compact), KeyType 0, then tags 0 (3 bytes) and
  // 7 (0 bytes), neither described.
  const bytes wire{0x02, 'g', 0x00, 0x02, 0x00, 0x03, 0xaa, 0xbb, 0xcc, 0x07, 0x00};
  auto decoded = decode_message(find_coordinator_api, message_kind::request, 3, wire);
  REQUIRE(decoded.ok());
  CHECK((*decoded)["Key"].as_string() == "g");
  REQUIRE(decoded->unknown_tags().size() == 2);
  CHECK(decoded->unknown_tags()[0] == unknown_tag{0, {0xaa, 0xbb, 0xcc}});
  CHECK(decoded->unknown_tags()[1] == unknown_tag{7, {}});
  bytes again;
  REQUIRE(encode_message(find_coordinator_api, message_kind::request, 3, *decoded, again).ok());
  CHECK(again == wire);
}

TEST_CASE("tagged fields out of order or overrunning their size are CORRUPT_MESSAGE",
          "[kafka]") {
  const bytes descending{0x02, 'g', 0x00, 0x02, 0x05, 0x00, 0x01, 0x00};
  CHECK(decode_message(find_coordinator_api, message_kind::request, 3, descending).code() ==
        errc::corrupt_message);
  // ApiVersions v3 response, FinalizedFeaturesEpoch (tag 1, int64) given 4 bytes.
  const bytes short_tag{0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
                        0x01, 0x01, 0x04, 0x00, 0x00, 0x00, 0x01};
  auto d = decode_message(api_versions_api, message_kind::response, 3, short_tag);
  CHECK(d.code() == errc::corrupt_message);
}

TEST_CASE("a known tagged field is written only when it differs from its default", "[kafka]") {
  auto response = make_message(api_versions_api, message_kind::response);
  bytes plain;
  REQUIRE(encode_message(api_versions_api, message_kind::response, 3, response, plain).ok());
  CHECK(plain == bytes{0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00});
  response["FinalizedFeaturesEpoch"] = int64_t{2};
  bytes tagged;
  REQUIRE(encode_message(api_versions_api, message_kind::response, 3, response, tagged).ok());
  CHECK(tagged == bytes{0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x01, 0x01, 0x08, 0x00, 0x00,
                        0x00, 0x00, 0x00, 0x00, 0x00, 0x02});
}

TEST_CASE("absurd lengths fail at once, before the codec reserves anything", "[kafka]") {
  // Metadata v0 request: Topics count 2^31 - 1, then 6 bytes.
  const bytes huge_array{0x7f, 0xff, 0xff, 0xff, 0, 1, 'a', 0, 1, 'b'};
  auto a = decode_message(metadata_api, message_kind::request, 0, huge_array);
  REQUIRE_FALSE(a.ok());
  CHECK(a.err().code == errc::corrupt_message);
  CHECK(a.err().message.find("Topics") != std::string::npos);
  // Metadata v9 request: compact count 2^32 - 2.
  const bytes huge_compact{0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0, 0, 0, 0};
  CHECK(decode_message(metadata_api, message_kind::request, 9, huge_compact).code() ==
        errc::corrupt_message);
  // Produce v3: Records claim 2 GB.
  const bytes huge_records{0xff, 0xff, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 't',
                           0,    0,    0, 1, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff};
  CHECK(decode_message(produce_api, message_kind::request, 3, huge_records).code() ==
        errc::corrupt_message);
  // A tagged-fields count larger than the bytes left.
  const bytes huge_tags{0x02, 'g', 0x00, 0xff, 0xff, 0xff, 0xff, 0x07};
  CHECK(decode_message(find_coordinator_api, message_kind::request, 3, huge_tags).code() ==
        errc::corrupt_message);
}

} // namespace capstan::kafka
