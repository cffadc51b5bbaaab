#pragma once

// Heartbeat: keeps a member in its group's generation; a rebalance answers REBALANCE_IN_PROGRESS.

#include <string>

#include "actors/gateway/handlers/handler_support.hpp"

namespace capstan {

kj::Promise<answer<bool>> handle_heartbeat(const client_session& s, std::string group,
                                           group_member_ref member);

} // namespace capstan
