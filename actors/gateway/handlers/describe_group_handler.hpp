#pragma once

// DescribeGroups: one group's state, protocol, generation and members.

#include <string>

#include "actors/gateway/handlers/handler_support.hpp"

namespace capstan {

kj::Promise<answer<group_summary>> handle_describe_group(const client_session& s,
                                                         std::string group);

} // namespace capstan
