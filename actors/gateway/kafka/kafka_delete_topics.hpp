#pragma once

// Kafka DeleteTopics (versions 1-6) through the shared delete-topic handler
// (handlers/delete_topic_handler.hpp), one call per topic, by name. A v6 entry that names a
// topic only by id is answered INVALID_REQUEST: the handler deletes by name.

#include <string>
#include <vector>

#include <kj/async.h>

#include "actors/gateway/handlers/handler_support.hpp"
#include "runtime/kafka/message_header.hpp"

namespace capstan {

// The names the request asks to delete, in order; "" for a v6 entry without a name.
std::vector<std::string> delete_topics_names(const kafka::request& req);

// REQUIRES: `results` holds one answer per name of delete_topics_names(req), in order.
kafka::struct_value delete_topics_response_body(const std::vector<answer<bool>>& results,
                                                const kafka::request& req);

// REQUIRES: `req` is a decoded DeleteTopics request at an offered version.
kj::Promise<bytes> serve_kafka_delete_topics(const client_session& s, kafka::request req);

} // namespace capstan
