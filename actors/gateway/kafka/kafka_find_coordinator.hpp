#pragma once

// Kafka FindCoordinator (versions 0-3) through the shared find-coordinator handler
// (handlers/find_coordinator_handler.hpp): a group's coordinator at its advertised Kafka
// listener.

#include <kj/async.h>

#include "actors/gateway/service_context.hpp"
#include "runtime/kafka/message_header.hpp"
#include "runtime/types.hpp"

namespace capstan {

// Key type 1 (a transaction's coordinator) is INVALID_REQUEST: capstan has no transactions. A
// coordinator whose node advertises no Kafka listener is COORDINATOR_NOT_AVAILABLE.
// REQUIRES: `req` is a decoded FindCoordinator request at an offered version.
kj::Promise<bytes> serve_find_coordinator(const client_session& s, kafka::request req);

} // namespace capstan
