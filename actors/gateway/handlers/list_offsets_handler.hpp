#pragma once

// ListOffsets: one partition's earliest (-2) or latest (-1) offset, or the first offset at or
// after a timestamp, from its replica on this node.

#include <cstdint>
#include <string>

#include "actors/gateway/handlers/handler_support.hpp"

namespace capstan {

kj::Promise<answer<list_offsets_result>> handle_list_offsets(const client_session& s,
                                                             const std::string& topic,
                                                             int32_t partition, int64_t timestamp);

} // namespace capstan
