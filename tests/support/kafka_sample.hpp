#pragma once

// Kafka messages with a non-default value in every field a version has, for round-trip tests,
// the codec's fuzz seeds and benchmarks: whatever the codec drops or mixes up shows as a
// difference after decoding.

#include <cstdint>

#include "runtime/kafka/message_codec.hpp"

namespace capstan::kafka {

// Every field present at `version` holds a value derived from `seed` and differing from its
// default; fields absent at `version` hold their defaults, as decoding leaves them. With an odd
// seed, fields nullable at `version` are null. Arrays hold two elements.
struct_value sample_message(const api_schema& api, message_kind kind, api_version version,
                            uint32_t seed);

} // namespace capstan::kafka
