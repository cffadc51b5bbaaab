#pragma once

// What the Kafka listener's per-API translations (kafka_*.hpp) share beyond
// kafka_response_frame.hpp: nullable strings.

#include <string>
#include <string_view>

#include "actors/gateway/kafka/kafka_response_frame.hpp"
#include "runtime/kafka/message_value.hpp"

namespace capstan {

// `s` as a string field that is nullable in the version: null when empty.
kafka::value nullable_string(const std::string& s);

// A nullable string field's value: "" for null.
std::string string_or_empty(const kafka::value& v);

} // namespace capstan
