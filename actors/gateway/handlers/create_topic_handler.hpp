#pragma once

// CreateTopics: one topic, through the active controller; answered once committed and (bounded)
// visible through this node (metadata_catch_up.hpp).

#include "actors/gateway/handlers/handler_support.hpp"

namespace capstan {

// INVALID_TOPIC_EXCEPTION for a bad name, INVALID_REQUEST for an internal topic (the cluster
// creates its offsets topic itself, on a group's first FindCoordinator), else the controller's
// answer.
kj::Promise<answer<topic_metadata>> handle_create_topic(const client_session& s, topic_spec spec);

} // namespace capstan
