#pragma once

// Kafka's wire number for each capstan error. capstan's errc values are its own sequence (they
// cross actors and the native API as themselves, runtime/errc.hpp); the Kafka listener answers
// with the number Kafka's protocol gives the same name.

#include <cstdint>

#include "runtime/errc.hpp"

namespace capstan {

// Kafka's code for `code`; -1 (UNKNOWN_SERVER_ERROR) for a name Kafka does not have.
int16_t kafka_error_code(errc code);

} // namespace capstan
