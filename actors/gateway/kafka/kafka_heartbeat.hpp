#pragma once

// Kafka's Heartbeat (versions 0-4) on the Heartbeat handler (handlers/heartbeat_handler.hpp).

#include <string>

#include <kj/async.h>

#include "actors/gateway/handlers/heartbeat_handler.hpp"
#include "runtime/kafka/message_header.hpp"

namespace capstan {

// REQUIRES: `body` is a decoded Heartbeat request.
group_member_ref heartbeat_member(const kafka::struct_value& body);

kj::Promise<bytes> serve_kafka_heartbeat(const client_session& s, kafka::request req);

} // namespace capstan
