#include "runtime/kafka/message_header.hpp"

#include <string>
#include <utility>

#include "runtime/kafka/api_schemas.hpp"

namespace capstan::kafka {
namespace {

// A header's tagged-fields section: no tagged header field is described, so every tag read is
// kept as unknown and written back.
std::vector<unknown_tag> read_header_tags(wire_reader& r) {
  auto tags = decode_struct({}, 0, true, r);
  return std::move(tags.unknown_tags());
}

status write_header_tags(const std::vector<unknown_tag>& tags, wire_writer& w) {
  struct_value x;
  x.unknown_tags() = tags;
  return encode_struct({}, x, 0, true, w);
}

} // namespace

int request_header_version(const api_schema* api, api_version version) {
  return api != nullptr && api->flexible.contains(version) ? 2 : 1;
}

int response_header_version(const api_schema& api, api_version version) {
  if (api.key == api_key::api_versions) return 0;
  return api.flexible.contains(version) ? 1 : 0;
}

result<decoded_header> decode_request_header(bytes_view frame) {
  wire_reader r(frame);
  decoded_header out;
  request_header& h = out.header;
  h.api_key = r.read_int16();
  h.version = r.read_int16();
  h.correlation_id = r.read_int32();
  const auto length = r.read_string_length(false, "client id");
  if (length) {
    const bytes_view id = r.read_raw(*length, "client id");
    h.client_id = std::string(id.begin(), id.end());
  }
  if (r.ok() && request_header_version(find_api(h.api_key), h.version) == 2)
    h.unknown_tags = read_header_tags(r);
  if (!r.ok()) return r.err();
  out.body_offset = r.position();
  return out;
}

status encode_request_header(const request_header& h, wire_writer& w) {
  if (h.client_id && h.client_id->size() > size_t{32767})
    return make_error(errc::invalid_request, "client id longer than 32767 bytes");
  w.write_int16(h.api_key);
  w.write_int16(h.version);
  w.write_int32(h.correlation_id);
  w.write_string_length(false, h.client_id ? std::optional(h.client_id->size()) : std::nullopt);
  if (h.client_id)
    w.write_raw(bytes_view(reinterpret_cast<const uint8_t*>(h.client_id->data()),
                           h.client_id->size()));
  if (request_header_version(find_api(h.api_key), h.version) == 2)
    return write_header_tags(h.unknown_tags, w);
  return {};
}

result<request> decode_request(bytes_view frame) {
  auto header = decode_request_header(frame);
  if (!header) return header.err();
  const api_schema* api = find_api(header->header.api_key);
  if (api == nullptr)
    return make_error(errc::invalid_request,
                      "unknown API key " + std::to_string(header->header.api_key));
  auto body = decode_message(*api, message_kind::request, header->header.version,
                             frame.subspan(header->body_offset));
  if (!body) return body.err();
  return request{std::move(header->header), std::move(body.value())};
}

status encode_request(const request_header& h, const struct_value& body, bytes& out) {
  const api_schema* api = find_api(h.api_key);
  if (api == nullptr)
    return make_error(errc::invalid_request, "unknown API key " + std::to_string(h.api_key));
  if (auto s = check_version(*api, h.version); !s) return s;
  wire_writer w(out);
  if (auto s = encode_request_header(h, w); !s) return s;
  return encode_message(*api, message_kind::request, h.version, body, out);
}

result<response> decode_response(const api_schema& api, api_version version, bytes_view frame) {
  wire_reader r(frame);
  response out;
  out.correlation_id = r.read_int32();
  if (r.ok() && response_header_version(api, version) == 1) out.unknown_tags = read_header_tags(r);
  if (!r.ok()) return r.err();
  auto body = decode_message(api, message_kind::response, version, frame.subspan(r.position()));
  if (!body) return body.err();
  out.body = std::move(body.value());
  return out;
}

status encode_response(const api_schema& api, api_version version, int32_t correlation_id,
                       const struct_value& body, bytes& out) {
  if (auto s = check_version(api, version); !s) return s;
  wire_writer w(out);
  w.write_int32(correlation_id);
  if (response_header_version(api, version) == 1)
    if (auto s = write_header_tags({}, w); !s) return s;
  return encode_message(api, message_kind::response, version, body, out);
}

} // namespace capstan::kafka
