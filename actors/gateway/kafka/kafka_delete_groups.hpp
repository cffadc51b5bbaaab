#pragma once

// Kafka's DeleteGroups (versions 0-2) on the DeleteGroup handler
// (handlers/delete_group_handler.hpp), one handler call per group named.

#include <string>
#include <vector>

#include <kj/async.h>

#include "actors/gateway/handlers/delete_group_handler.hpp"
#include "runtime/kafka/message_header.hpp"

namespace capstan {

// REQUIRES: answers.size() == groups.size().
kafka::struct_value delete_groups_response_body(const std::vector<std::string>& groups,
                                                const std::vector<answer<bool>>& answers);

kj::Promise<bytes> serve_kafka_delete_groups(const client_session& s, kafka::request req);

} // namespace capstan
