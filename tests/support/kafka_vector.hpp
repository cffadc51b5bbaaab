#pragma once

// Hand-made Kafka test vectors: bytes spelled in hex, grouped by field, checked to decode as a
// described message and to encode back to the same bytes. Catch2 assertions, so unit tests
// only (the fuzz targets use kafka_sample alone).

#include <string_view>

#include "runtime/kafka/message_codec.hpp"

namespace capstan::kafka {

// The bytes `hex` spells in lower case; spaces between bytes are skipped.
bytes from_hex(std::string_view hex);

// `wire` decoded as `api`'s message at `version`; REQUIREs that it decodes and CHECKs that it
// encodes back to `wire`.
struct_value decode_vector(const api_schema& api, message_kind kind, api_version version,
                           const bytes& wire);

} // namespace capstan::kafka
