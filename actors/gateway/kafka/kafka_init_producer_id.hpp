#pragma once

// Kafka InitProducerId (versions 0-4) through the shared init-producer-id handler
// (handlers/init_producer_id_handler.hpp): a new idempotent producer id at epoch 0 from the
// active controller, as the native initProducerId gives.

#include <kj/async.h>

#include "actors/gateway/service_context.hpp"
#include "runtime/kafka/message_header.hpp"
#include "runtime/types.hpp"

namespace capstan {

// A non-empty TransactionalId is INVALID_REQUEST (no transactions). The v3+ ProducerId and
// ProducerEpoch of a producer asking to bump its epoch are not read: it gets a new id.
// REQUIRES: `req` is a decoded InitProducerId request at an offered version.
kj::Promise<bytes> serve_init_producer_id(const client_session& s, kafka::request req);

} // namespace capstan
