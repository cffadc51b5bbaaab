#pragma once

// OffsetFetch: a group's committed offsets for the given partitions, from its coordinator.

#include <string>

#include "actors/gateway/handlers/handler_support.hpp"

namespace capstan {

// `entries` name the partitions (their offsets are ignored); the answer holds one entry each.
kj::Promise<answer<group_offsets>> handle_fetch_offsets(const client_session& s, std::string group,
                                                        group_offsets entries);

} // namespace capstan
