#pragma once

// What the Kafka listener does with one request frame, decided before any actor is asked
// (docs/kafka.md, "The listener"): answer it at once (ApiVersions), hand it to the API's handler,
// or close the connection, as Kafka's broker does for a request it cannot read. A plain function
// of the frame's bytes, so the unit tests and the fuzz target drive it without a socket.

#include <string>

#include "runtime/kafka/message_header.hpp"
#include "runtime/types.hpp"

namespace capstan {

struct kafka_route {
  enum class kind { answer, dispatch, close };
  kind what = kind::close;
  // answer: the whole response frame, its size prefix included.
  bytes response;
  // dispatch: the decoded request, of an offered API at an offered version.
  kafka::request request;
  // close: why, for the connection's log line.
  std::string why;
};

// Largest request other than Produce the listener decodes. A decoded request is a tree of values
// of up to 72 times its wire size (docs/kafka.md, "The decoded value"); no such request needs
// more than this. A Produce request is bounded by socket.request.max.bytes alone: its bulk is
// record batches, each decoded as one bytes value.
inline constexpr size_t max_kafka_request_bytes = size_t{1} << 20;

// REQUIRES: `frame` is one request frame's contents (without its size prefix).
// - ApiVersions at an offered version: answered with the offered APIs; at a version it does not
//   know: answered in v0 form with UNSUPPORTED_VERSION and the offered ranges (KIP-511);
// - another offered API at an offered version whose body decodes: dispatched;
// - anything else (a request other than Produce above max_kafka_request_bytes, a header that does not decode, an API not offered, a version not offered, a
//   body that does not follow its description): close.
kafka_route route_request(bytes_view frame);

} // namespace capstan
