// Framing and headers: frames are cut off a byte stream with a maximum size, the header version
// follows the API's flexible versions (ApiVersions responses always v0), and a request cut at
// any byte fails with a named error.

#include <catch2/catch.hpp>

#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/frame.hpp"
#include "runtime/kafka/message_header.hpp"
#include "tests/support/kafka_sample.hpp"

namespace capstan::kafka {

TEST_CASE("frames are cut off the front of a stream, waiting for whole frames", "[kafka]") {
  const bytes stream{0, 0, 0, 2, 'a', 'b', 0, 0, 0, 0, 0, 0, 0, 3, 'x'};
  auto first = next_frame(stream, 100);
  REQUIRE(first.ok());
  CHECK(first->consumed == 6);
  CHECK(bytes(first->frame.begin(), first->frame.end()) == bytes{'a', 'b'});
  auto empty = next_frame(bytes_view(stream).subspan(6), 100);
  REQUIRE(empty.ok());
  CHECK(empty->consumed == 4);
  CHECK(empty->frame.empty());
  auto partial = next_frame(bytes_view(stream).subspan(10), 100);
  REQUIRE(partial.ok());
  CHECK(partial->consumed == 0);
  auto no_size = next_frame(bytes_view(stream).first(3), 100);
  REQUIRE(no_size.ok());
  CHECK(no_size->consumed == 0);
}

TEST_CASE("a negative or oversized frame size is refused before its bytes arrive", "[kafka]") {
  const bytes negative{0xff, 0xff, 0xff, 0xfe};
  CHECK(next_frame(negative, 100).code() == errc::corrupt_message);
  const bytes huge{0x7f, 0xff, 0xff, 0xff};
  auto too_big = next_frame(huge, 104857600);
  CHECK(too_big.code() == errc::message_too_large);
  const bytes just_over{0, 0, 0, 101};
  CHECK(next_frame(just_over, 100).code() == errc::message_too_large);
  const bytes at_max{0, 0, 0, 100};
  CHECK(next_frame(at_max, 100).ok());
}

TEST_CASE("begin_frame and end_frame write the size prefix in place", "[kafka]") {
  bytes out{9};
  const size_t at = begin_frame(out);
  out.insert(out.end(), {1, 2, 3});
  end_frame(out, at);
  CHECK(out == bytes{9, 0, 0, 0, 3, 1, 2, 3});
}

TEST_CASE("header versions follow the API's flexible versions", "[kafka]") {
  CHECK(request_header_version(&metadata_api, 8) == 1);
  CHECK(request_header_version(&metadata_api, 9) == 2);
  CHECK(request_header_version(&produce_api, 8) == 1);
  CHECK(request_header_version(nullptr, 9) == 1);
  CHECK(response_header_version(metadata_api, 9) == 1);
  CHECK(response_header_version(find_coordinator_api, 2) == 0);
  CHECK(response_header_version(find_coordinator_api, 3) == 1);
  CHECK(response_header_version(api_versions_api, 3) == 0);
}

TEST_CASE("every described request frame round trips, and fails when cut at any byte",
          "[kafka]") {
  for (const api_schema* api : described_apis()) {
    for (api_version version = api->valid.from; version <= api->valid.to; ++version) {
      INFO(api->name << " v" << version);
      request_header h{api->key, version, 77, "client", {}};
      if (request_header_version(api, version) == 2) h.unknown_tags = {{4, {1, 2}}};
      const auto body = sample_message(*api, message_kind::request, version, 4);
      bytes wire;
      REQUIRE(encode_request(h, body, wire).ok());
      auto back = decode_request(wire);
      REQUIRE(back.ok());
      CHECK(back->header == h);
      CHECK(back->body == body);
      for (size_t cut = 0; cut < wire.size(); ++cut) {
        INFO("cut at " << cut);
        CHECK(decode_request(bytes_view(wire).first(cut)).code() == errc::corrupt_message);
      }

      const auto response_body = sample_message(*api, message_kind::response, version, 4);
      bytes response_wire;
      REQUIRE(encode_response(*api, version, 77, response_body, response_wire).ok());
      auto response_back = decode_response(*api, version, response_wire);
      REQUIRE(response_back.ok());
      CHECK(response_back->correlation_id == 77);
      CHECK(response_back->body == response_body);
    }
  }
}

TEST_CASE("an unknown API key or version still yields the header to answer", "[kafka]") {
  // ApiVersions v9 (flexible, so header v2), correlation id 5, client id "c".
  const bytes future{0x00, 0x12, 0x00, 0x09, 0, 0, 0, 5, 0x00, 0x01, 'c', 0x00, 0x00};
  auto header = decode_request_header(future);
  REQUIRE(header.ok());
  CHECK(header->header.correlation_id == 5);
  CHECK(header->body_offset == 12);
  CHECK(decode_request(future).code() == errc::unsupported_version);

  // Key 999 is not described: read as header v1.
  const bytes unknown{0x03, 0xe7, 0x00, 0x00, 0, 0, 0, 6, 0xff, 0xff};
  auto h = decode_request_header(unknown);
  REQUIRE(h.ok());
  CHECK(h->header.api_key == 999);
  CHECK(h->header.correlation_id == 6);
  CHECK(decode_request(unknown).code() == errc::invalid_request);
}

} // namespace capstan::kafka
