#pragma once

// DeleteTopics: one topic, through the active controller.

#include <string>

#include "actors/gateway/handlers/handler_support.hpp"

namespace capstan {

kj::Promise<answer<bool>> handle_delete_topic(const client_session& s, std::string name);

} // namespace capstan
