#pragma once

// Kafka DeleteTopics (versions 1-6) through the shared delete-topic handler
// (handlers/delete_topic_handler.hpp), one call per topic, by name. From v6 an entry names its
// topic by name or by topic id (KIP-516); one named by id is looked up in this node's metadata
// (handlers/metadata_handler.hpp) and deleted by the name found there.

#include <optional>
#include <string>
#include <vector>

#include <kj/async.h>

#include "actors/gateway/handlers/handler_support.hpp"
#include "runtime/cluster/metadata.hpp"
#include "runtime/kafka/message_header.hpp"

namespace capstan {

// One entry of the request, and what it is answered with: the name to delete (null for an
// entry with no name whose id is unknown), its topic id (v6; zeros when none is known), or why
// it is refused before any handler call.
struct kafka_delete_topic_call {
  std::optional<std::string> name;
  topic_id id{};
  error refused;
};

// The request's entries, in order, resolved against `md` (v6 only; null: this node could not say
// why `md_err` tells). As Kafka's controller answers them: a name alone is deleted by name
// (its id from `md` in the answer); an id alone by the name `md` has for it, UNKNOWN_TOPIC_ID if
// none; a name and an id together, or neither, INVALID_REQUEST.
std::vector<kafka_delete_topic_call> delete_topics_calls(const kafka::request& req,
                                                         const cluster_metadata* md,
                                                         const error& md_err = {});

// REQUIRES: `results` holds one answer per call, in order.
kafka::struct_value delete_topics_response_body(const std::vector<kafka_delete_topic_call>& calls,
                                                const std::vector<answer<bool>>& results,
                                                const kafka::request& req);

// REQUIRES: `req` is a decoded DeleteTopics request at an offered version.
kj::Promise<bytes> serve_kafka_delete_topics(const client_session& s, kafka::request req);

} // namespace capstan
