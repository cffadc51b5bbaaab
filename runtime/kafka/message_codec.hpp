#pragma once

// Encodes and decodes any described Kafka message at any of its versions (docs/kafka.md, "The
// wire codec"). The description (message_schema.hpp) alone decides the bytes: a field absent in
// the version is skipped on the wire and decodes as its default; in a flexible version strings,
// bytes and arrays take their compact forms and every struct ends in a tagged-fields section.
//
// Decoding never reads past its input and never allocates more than the input's length
// justifies: a length or count larger than the bytes left fails before anything is reserved.
// Errors: CORRUPT_MESSAGE for bytes that do not follow the description (truncated, a bad
// varint, null in a non-nullable field, tags out of order, bytes left over), UNSUPPORTED_VERSION
// for a version outside the API's, INVALID_REQUEST for a value that does not fit its field on
// encoding (wrong kind, out of range, null where not nullable).

#include <span>

#include "runtime/kafka/message_schema.hpp"
#include "runtime/kafka/message_value.hpp"
#include "runtime/kafka/wire_reader.hpp"
#include "runtime/kafka/wire_writer.hpp"
#include "runtime/result.hpp"

namespace capstan::kafka {

enum class message_kind : uint8_t { request, response };

std::span<const field> fields_of(const api_schema& api, message_kind kind);

// Checks that `version` is one of api's: UNSUPPORTED_VERSION otherwise.
status check_version(const api_schema& api, api_version version);

// The fields of a struct (a message body, or a struct inside one) at `version`, appended to w.
status encode_struct(std::span<const field> fields, const struct_value& x, api_version version,
                     bool flexible, wire_writer& w);
// Reads the fields of a struct; on failure r holds the error and the value is partial.
struct_value decode_struct(std::span<const field> fields, api_version version, bool flexible,
                           wire_reader& r);

// A whole message body: appended to `out`, or read from all of `in` (bytes left over are
// CORRUPT_MESSAGE).
status encode_message(const api_schema& api, message_kind kind, api_version version,
                      const struct_value& x, bytes& out);
result<struct_value> decode_message(const api_schema& api, message_kind kind,
                                    api_version version, bytes_view in);

// A message of `api` with every field at its default, to fill in before encoding.
struct_value make_message(const api_schema& api, message_kind kind);

} // namespace capstan::kafka
