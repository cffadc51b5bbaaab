#pragma once

// Kafka's JoinGroup (versions 0-7) on the JoinGroup handler (handlers/join_group_handler.hpp).
// Protocol metadata passes through as bytes. The coordinator answers a join without a member id
// MEMBER_ID_REQUIRED with the id to use (KIP-394): from v4 the client is told so and joins again;
// a v0-3 client cannot be, so the listener joins again for it with that id.

#include <string>

#include <kj/async.h>

#include "actors/gateway/handlers/join_group_handler.hpp"
#include "runtime/kafka/message_header.hpp"

namespace capstan {

struct kafka_join_group_call {
  std::string group;
  join_group_request request;
};

// REQUIRES: `req` is a decoded JoinGroup request. v0 has no rebalance timeout: Kafka takes the
// session timeout for it.
kafka_join_group_call join_group_call(const kafka::request& req);

// The body answering `a` at `version`; `protocol_type` is the request's (v7 answers it).
kafka::struct_value join_group_response_body(const answer<join_group_response>& a,
                                             kafka::api_version version,
                                             const std::string& protocol_type);

kj::Promise<bytes> serve_kafka_join_group(const client_session& s, kafka::request req);

} // namespace capstan
