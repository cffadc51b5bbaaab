#pragma once

// Kafka's ListGroups (versions 0-4) on the ListGroups handler (handlers/list_groups_handler.hpp):
// the groups with commits in the offsets partitions this node leads. That handler names them
// only; each group's protocol type and state (v4) come from a DescribeGroup handler call per
// group, so a ListGroups through this listener counts as one listGroups and one describeGroup
// per group in the request metrics.

#include <string>
#include <vector>

#include <kj/async.h>

#include "actors/gateway/handlers/describe_group_handler.hpp"
#include "actors/gateway/handlers/list_groups_handler.hpp"
#include "runtime/kafka/message_header.hpp"

namespace capstan {

// The body answering `listed` with each group's `described` entry (same order), keeping only the
// groups whose state is in `states` (v4's StatesFilter, compared as Kafka does without case; empty:
// every group). A group whose description failed is listed with an empty protocol type and
// state, unless there is a filter. REQUIRES: described.size() == listed.value.size().
kafka::struct_value list_groups_response_body(const answer<std::vector<std::string>>& listed,
                                              const std::vector<answer<group_summary>>& described,
                                              const std::vector<std::string>& states);

kj::Promise<bytes> serve_kafka_list_groups(const client_session& s, kafka::request req);

} // namespace capstan
