#pragma once

// Kafka's LeaveGroup (versions 0-4) on the LeaveGroup handler (handlers/leave_group_handler.hpp):
// one member in v0-2, a batch of members from v3 (KIP-345), each left with its own handler call.

#include <string>
#include <vector>

#include <kj/async.h>

#include "actors/gateway/handlers/leave_group_handler.hpp"
#include "runtime/kafka/message_header.hpp"

namespace capstan {

// REQUIRES: `req` is a decoded LeaveGroup request. The members leaving, in request order.
std::vector<group_member_ref> leaving_members(const kafka::request& req);

// The body answering each of `leaving` with the matching entry of `answers`. From v3 each member
// has its own error, and the top level the coordinator's (NOT_COORDINATOR,
// COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS) if a member got one, as Kafka puts
// group-wide errors there; in v0-2 the one member's error is the top level's.
// REQUIRES: answers.size() == leaving.size().
kafka::struct_value leave_group_response_body(const std::vector<group_member_ref>& leaving,
                                              const std::vector<answer<bool>>& answers,
                                              kafka::api_version version);

kj::Promise<bytes> serve_kafka_leave_group(const client_session& s, kafka::request req);

} // namespace capstan
