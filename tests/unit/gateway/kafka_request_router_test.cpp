// The Kafka listener's decision for each request frame (actors/gateway/kafka/
// kafka_request_router): ApiVersions answered at once (in v0 form for a version it does not
// know), offered APIs dispatched, and every other frame a closed connection.

#include "actors/gateway/kafka/kafka_request_router.hpp"

#include <catch2/catch.hpp>

#include "actors/gateway/kafka/kafka_offered_apis.hpp"
#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/frame.hpp"
#include "runtime/kafka/message_codec.hpp"

using namespace capstan;

namespace {

// A request frame's contents (no size prefix) for `api` at `version`, every field at its default.
bytes request_of(const kafka::api_schema& api, int16_t version, int32_t correlation_id) {
  bytes out;
  auto body = kafka::make_message(api, kafka::message_kind::request);
  REQUIRE(kafka::encode_request(kafka::request_header{api.key, version, correlation_id, "t", {}},
                                body, out)
              .ok());
  return out;
}

// A request header alone: key, version, correlation id, a null client id, and for header v2 an
// empty tagged-fields section.
bytes header_only(int16_t key, int16_t version, int32_t correlation_id, bool v2 = false) {
  bytes out;
  auto put16 = [&](int16_t x) {
    out.push_back(static_cast<uint8_t>(x >> 8));
    out.push_back(static_cast<uint8_t>(x));
  };
  put16(key);
  put16(version);
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<uint8_t>(correlation_id >> shift));
  put16(-1);
  if (v2) out.push_back(0);
  return out;
}

// The ApiVersions response in `route`, read at `version`.
kafka::response api_versions_of(const kafka_route& route, int16_t version) {
  REQUIRE(route.what == kafka_route::kind::answer);
  auto cut = kafka::next_frame(route.response, 1 << 20);
  REQUIRE(cut.ok());
  REQUIRE(cut->consumed == route.response.size());
  auto r = kafka::decode_response(kafka::api_versions_api, version, cut->frame);
  REQUIRE(r.ok());
  return std::move(*r);
}

} // namespace

TEST_CASE("ApiVersions at each offered version lists exactly the offered APIs", "[gateway][kafka]") {
  for (int16_t version = 0; version <= 3; ++version) {
    INFO("version " << version);
    auto r = api_versions_of(route_request(request_of(kafka::api_versions_api, version, 41)),
                             version);
    CHECK(r.correlation_id == 41);
    CHECK(r.body["ErrorCode"].as_int() == 0);
    const auto& keys = r.body["ApiKeys"].as_array();
    REQUIRE(keys.size() == offered_apis().size());
    for (size_t i = 0; i < keys.size(); ++i) {
      CHECK(keys[i].as_struct()["ApiKey"].as_int() == offered_apis()[i].key);
      CHECK(keys[i].as_struct()["MinVersion"].as_int() == offered_apis()[i].min_version);
      CHECK(keys[i].as_struct()["MaxVersion"].as_int() == offered_apis()[i].max_version);
    }
  }
}

TEST_CASE("ApiVersions at a version it does not know is answered in v0 form with "
          "UNSUPPORTED_VERSION and the ranges",
          "[gateway][kafka]") {
  auto r = api_versions_of(route_request(header_only(kafka::api_key::api_versions, 9, 5, true)), 0);
  CHECK(r.correlation_id == 5);
  CHECK(r.body["ErrorCode"].as_int() == 35);
  CHECK(r.body["ApiKeys"].as_array().size() == offered_apis().size());
}

TEST_CASE("Metadata at an offered version is dispatched with its decoded request",
          "[gateway][kafka]") {
  auto route = route_request(request_of(kafka::metadata_api, 9, 77));
  REQUIRE(route.what == kafka_route::kind::dispatch);
  CHECK(route.request.header.api_key == kafka::api_key::metadata);
  CHECK(route.request.header.version == 9);
  CHECK(route.request.header.correlation_id == 77);
}

TEST_CASE("an API not offered, a version not offered or bytes that do not decode close the "
          "connection",
          "[gateway][kafka]") {
  // JoinGroup (11): not offered yet.
  CHECK(route_request(header_only(11, 0, 1)).what == kafka_route::kind::close);
  CHECK(route_request(header_only(999, 0, 1)).what == kafka_route::kind::close);
  CHECK(route_request(header_only(kafka::api_key::metadata, 10, 1)).what ==
        kafka_route::kind::close);
  CHECK(route_request(bytes{0x00, 0x03}).what == kafka_route::kind::close);
  auto truncated = request_of(kafka::metadata_api, 9, 1);
  truncated.pop_back();
  CHECK(route_request(truncated).what == kafka_route::kind::close);
}

TEST_CASE("a request other than Produce above max_kafka_request_bytes closes the connection "
          "undecoded",
          "[gateway][kafka]") {
  auto big = request_of(kafka::metadata_api, 4, 1);
  big.resize(max_kafka_request_bytes + 1, 0);
  auto route = route_request(big);
  CHECK(route.what == kafka_route::kind::close);
  CHECK(route.why.find("above") != std::string::npos);
}
