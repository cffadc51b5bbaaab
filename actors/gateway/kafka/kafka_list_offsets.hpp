#pragma once

// Kafka ListOffsets (versions 1-5) through the shared list-offsets handler
// (handlers/list_offsets_handler.hpp), one call per partition.

#include <kj/async.h>

#include "actors/gateway/service_context.hpp"
#include "runtime/kafka/message_header.hpp"
#include "runtime/types.hpp"

namespace capstan {

// REQUIRES: `req` is a decoded ListOffsets request at an offered version.
kj::Promise<bytes> serve_list_offsets(const client_session& s, kafka::request req);

} // namespace capstan
