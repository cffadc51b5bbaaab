#pragma once

// ListGroups: the groups this node's coordinator knows.

#include <string>
#include <vector>

#include "actors/gateway/handlers/handler_support.hpp"

namespace capstan {

kj::Promise<answer<std::vector<std::string>>> handle_list_groups(const client_session& s);

} // namespace capstan
