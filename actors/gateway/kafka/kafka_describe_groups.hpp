#pragma once

// Kafka's DescribeGroups (versions 0-5) on the DescribeGroup handler
// (handlers/describe_group_handler.hpp), one handler call per group asked. The coordinator keeps
// no client host and no member's protocol metadata once the group is formed: ClientHost and
// MemberMetadata are answered empty. Authorized operations are not computed (Kafka's "unknown").

#include <string>
#include <vector>

#include <kj/async.h>

#include "actors/gateway/handlers/describe_group_handler.hpp"
#include "runtime/kafka/message_header.hpp"

namespace capstan {

// REQUIRES: answers.size() == groups.size().
kafka::struct_value
describe_groups_response_body(const std::vector<std::string>& groups,
                              const std::vector<answer<group_summary>>& answers);

kj::Promise<bytes> serve_kafka_describe_groups(const client_session& s, kafka::request req);

} // namespace capstan
