#pragma once

// CreatePartitions: grows a topic to `total` partitions through the active controller; answered
// once committed and (bounded) visible through this node (metadata_catch_up.hpp).

#include <cstdint>
#include <string>

#include "actors/gateway/handlers/handler_support.hpp"

namespace capstan {

kj::Promise<answer<bool>> handle_create_partitions(const client_session& s, std::string topic,
                                                   int32_t total);

} // namespace capstan
