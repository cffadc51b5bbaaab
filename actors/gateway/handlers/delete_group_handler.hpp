#pragma once

// DeleteGroups: one empty group and its committed offsets.

#include <string>

#include "actors/gateway/handlers/handler_support.hpp"

namespace capstan {

kj::Promise<answer<bool>> handle_delete_group(const client_session& s, std::string group);

} // namespace capstan
