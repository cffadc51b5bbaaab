#pragma once

// LeaveGroup: a member leaves at once rather than at its session timeout.

#include <string>

#include "actors/gateway/handlers/handler_support.hpp"

namespace capstan {

kj::Promise<answer<bool>> handle_leave_group(const client_session& s, std::string group,
                                             group_member_ref member);

} // namespace capstan
