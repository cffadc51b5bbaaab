#pragma once

// SyncGroup: a member's assignment for the generation; the leader's sync carries everyone's.

#include <string>

#include "actors/gateway/handlers/handler_support.hpp"

namespace capstan {

kj::Promise<answer<sync_group_response>> handle_sync_group(const client_session& s,
                                                           std::string group,
                                                           sync_group_request req);

} // namespace capstan
