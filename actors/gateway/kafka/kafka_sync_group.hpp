#pragma once

// Kafka's SyncGroup (versions 0-5) on the SyncGroup handler (handlers/sync_group_handler.hpp).
// Assignments pass through as bytes. v5's protocol type and name are answered as the member sent
// them: they came from this generation's join answer, and the coordinator does not check them.

#include <string>

#include <kj/async.h>

#include "actors/gateway/handlers/sync_group_handler.hpp"
#include "runtime/kafka/message_header.hpp"

namespace capstan {

struct kafka_sync_group_call {
  std::string group;
  sync_group_request request;
};

// REQUIRES: `body` is a decoded SyncGroup request.
kafka_sync_group_call sync_group_call(const kafka::struct_value& body);

kafka::struct_value sync_group_response_body(const answer<sync_group_response>& a,
                                             const kafka::struct_value& request);

kj::Promise<bytes> serve_kafka_sync_group(const client_session& s, kafka::request req);

} // namespace capstan
