#pragma once

// AlterConfigs: sets and deletes a topic's configs through the active controller.

#include <string>
#include <vector>

#include "actors/gateway/handlers/handler_support.hpp"

namespace capstan {

kj::Promise<answer<bool>> handle_alter_configs(const client_session& s, std::string topic,
                                               config_map configs,
                                               std::vector<std::string> deleted);

} // namespace capstan
