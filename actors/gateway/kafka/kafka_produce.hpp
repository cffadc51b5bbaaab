#pragma once

// Kafka Produce (versions 3-8) through the shared produce handler (handlers/produce_handler.hpp),
// one call per partition: each partition's batch is validated, copied once and appended exactly
// as a native produce is, acks and timeouts included.

#include <kj/async.h>

#include "actors/gateway/service_context.hpp"
#include "runtime/kafka/message_header.hpp"
#include "runtime/types.hpp"

namespace capstan {

// The response frame once every partition is answered; an empty frame (nothing to send) for
// acks=0, as Kafka sends no response then. A produce response the fault switch drops ends the
// connection. REQUIRES: `req` is a decoded Produce request at an offered version.
kj::Promise<bytes> serve_produce(const client_session& s, kafka::request req);

} // namespace capstan
