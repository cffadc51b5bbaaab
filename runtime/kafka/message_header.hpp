#pragma once

// Kafka's request header v1/v2 and response header v0/v1 (docs/kafka.md, "Headers"), and whole
// request and response frames' contents (a header, then the body as message_codec reads it).
// The header version follows from the API's flexible versions: request header v2 and response
// header v1 (each with a tagged-fields section) for a flexible version, v1 and v0 otherwise;
// ApiVersions responses always take response header v0, so that a client that sent a version
// the broker does not know can still read the answer (KIP-511). The client id is a classic
// nullable string in both request headers.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/kafka/message_codec.hpp"

namespace capstan::kafka {

struct request_header {
  int16_t api_key = -1;
  api_version version = 0;
  int32_t correlation_id = 0;
  std::optional<std::string> client_id;
  std::vector<unknown_tag> unknown_tags;
  bool operator==(const request_header&) const = default;
};

// 1 or 2 for a request of `api` at `version`; 1 for an API that is not described.
int request_header_version(const api_schema* api, api_version version);
// 0 or 1.
int response_header_version(const api_schema& api, api_version version);

// The header and where the body starts. An API key that is not described is read as header v1
// (its version and correlation id are where every header has them), for the caller to answer.
struct decoded_header {
  request_header header;
  size_t body_offset = 0;
};
result<decoded_header> decode_request_header(bytes_view frame);
// INVALID_REQUEST for a client id longer than an int16 length allows.
status encode_request_header(const request_header& h, wire_writer& w);

struct request {
  request_header header;
  struct_value body;
};
// A request frame's contents (without the size prefix). An API that is not described is
// INVALID_REQUEST, a version outside its description UNSUPPORTED_VERSION.
result<request> decode_request(bytes_view frame);
status encode_request(const request_header& h, const struct_value& body, bytes& out);

struct response {
  int32_t correlation_id = 0;
  std::vector<unknown_tag> unknown_tags;
  struct_value body;
};
// A response frame's contents, for a request of `api` at `version` (a response does not name
// its API: the client knows it from the correlation id).
result<response> decode_response(const api_schema& api, api_version version, bytes_view frame);
status encode_response(const api_schema& api, api_version version, int32_t correlation_id,
                       const struct_value& body, bytes& out);

} // namespace capstan::kafka
