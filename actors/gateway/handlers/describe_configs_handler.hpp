#pragma once

// DescribeConfigs: a topic's configs, from the controller's metadata cache once this node has
// one, else from the node's own metadata actor.

#include <string>

#include "actors/gateway/handlers/handler_support.hpp"

namespace capstan {

kj::Promise<answer<config_map>> handle_describe_configs(const client_session& s,
                                                        std::string topic);

} // namespace capstan
