#pragma once

// What the unit tests of the Kafka listener's translations (tests/unit/gateway/kafka_*_test.cpp)
// share: a request body encoded and decoded as the listener reads a frame, and a response body
// through its frame and back as a client reads it. Catch2 tests only.

#include <catch2/catch.hpp>

#include "actors/gateway/handlers/handler_support.hpp"
#include "actors/gateway/kafka/kafka_response_frame.hpp"
#include "runtime/kafka/frame.hpp"
#include "runtime/kafka/message_codec.hpp"

namespace capstan::test {

// `body` sent at `version` by client "cli" with correlation id 9.
inline kafka::request sent(const kafka::api_schema& api, int16_t version,
                           const kafka::struct_value& body) {
  bytes frame;
  REQUIRE(kafka::encode_request(kafka::request_header{api.key, version, 9, "cli", {}}, body, frame)
              .ok());
  auto decoded = kafka::decode_request(frame);
  REQUIRE(decoded.ok());
  return std::move(*decoded);
}

// `body` answering `req`, through its frame and back.
inline kafka::struct_value received(const kafka::api_schema& api, const kafka::request& req,
                                    const kafka::struct_value& body) {
  const auto frame = response_frame(api, req, body);
  auto cut = kafka::next_frame(frame, 1 << 20);
  REQUIRE(cut.ok());
  REQUIRE(cut->consumed == frame.size());
  auto r = kafka::decode_response(api, req.header.version, cut->frame);
  REQUIRE(r.ok());
  CHECK(r->correlation_id == 9);
  return std::move(r->body);
}

// A request of `api` with every field at its default, to fill in.
inline kafka::struct_value request_body(const kafka::api_schema& api) {
  return kafka::make_message(api, kafka::message_kind::request);
}

// A handler's answer refused with `code`.
template <class R>
answer<R> failed(errc code) {
  return answer<R>{R{}, make_error(code, "refused")};
}

inline int16_t code_of(const kafka::value& v) {
  return static_cast<int16_t>(v.as_int());
}

} // namespace capstan::test
