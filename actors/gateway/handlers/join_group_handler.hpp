#pragma once

// JoinGroup: answered when the group's join phase ends (within its rebalance timeout).

#include <string>

#include "actors/gateway/handlers/handler_support.hpp"

namespace capstan {

// The answer's member_id is set on an error too (the request's, or the one the coordinator
// assigned): a client keeps it for its next join.
kj::Promise<answer<join_group_response>> handle_join_group(const client_session& s,
                                                           std::string group,
                                                           join_group_request req);

} // namespace capstan
