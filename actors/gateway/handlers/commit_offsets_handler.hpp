#pragma once

// OffsetCommit: a group member's (or, with generation -1, a simple consumer's) committed
// offsets, through the group's coordinator.

#include <string>

#include "actors/gateway/handlers/handler_support.hpp"

namespace capstan {

// The request fails whole on a bad group, member field, topic or partition, an offset below -1
// (OFFSET_OUT_OF_RANGE) or a leader epoch below -1; otherwise each entry carries its own error.
kj::Promise<answer<group_offsets>> handle_commit_offsets(const client_session& s,
                                                         std::string group,
                                                         group_member_ref member,
                                                         group_offsets entries);

} // namespace capstan
