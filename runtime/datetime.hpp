#pragma once

// The date-times Kafka's tools take (kafka-consumer-groups --to-datetime):
// YYYY-MM-DDTHH:mm:SS[.sss], then optionally Z or a UTC offset (+HH:mm, -HH:mm, +HHmm); without
// one, the local time zone (the TZ environment variable), as Kafka.

#include <cstdint>
#include <string>

#include "runtime/result.hpp"

namespace capstan {

// Milliseconds since the Unix epoch. INVALID_REQUEST naming the expected form for anything else
// (a field out of range included).
result<int64_t> parse_datetime(const std::string& text);

} // namespace capstan
