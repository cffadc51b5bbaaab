#pragma once

// Kafka's wire number for each capstan error. capstan's errc values are its own sequence (they
// cross actors and the native API as themselves, runtime/errc.hpp); the Kafka listener answers
// with the number Kafka's protocol gives the same name. The numbers live in one place, the
// $kafka annotation of each ErrorCode enumerant in schema/client.capnp, which native clients read
// too.

#include <cstdint>

#include "runtime/errc.hpp"

namespace capstan {

// Kafka's code for `code`, as schema/client.capnp annotates it; -1 (UNKNOWN_SERVER_ERROR) for a
// code past the schema's last enumerant.
int16_t kafka_error_code(errc code);

} // namespace capstan
