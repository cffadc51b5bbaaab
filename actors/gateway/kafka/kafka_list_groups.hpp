#pragma once

// Kafka's ListGroups (versions 0-3) on the ListGroups handler (handlers/list_groups_handler.hpp):
// the groups with commits in the offsets partitions this node leads. The handler knows their
// names only, so each is listed with an empty protocol type (Kafka's answer for a group that has
// only commits), and v4, whose answer carries each group's state, is not offered.

#include <string>
#include <vector>

#include <kj/async.h>

#include "actors/gateway/handlers/list_groups_handler.hpp"
#include "runtime/kafka/message_header.hpp"

namespace capstan {

kafka::struct_value list_groups_response_body(const answer<std::vector<std::string>>& a);

kj::Promise<bytes> serve_kafka_list_groups(const client_session& s, kafka::request req);

} // namespace capstan
