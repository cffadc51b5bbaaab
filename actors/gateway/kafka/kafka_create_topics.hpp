#pragma once

// Kafka CreateTopics (versions 2-7) through the shared create-topic handler
// (handlers/create_topic_handler.hpp), one call per topic. NumPartitions and ReplicationFactor
// -1 leave the choice to the controller (num.partitions, default.replication.factor).

#include <vector>

#include <kj/async.h>

#include "actors/gateway/handlers/handler_support.hpp"
#include "runtime/cluster/metadata.hpp"
#include "runtime/kafka/message_header.hpp"

namespace capstan {

// One requested topic: its spec, or why it is refused before any call (explicit replica
// assignments, which the controller does not take).
struct kafka_create_topic_call {
  topic_spec spec;
  error refused;
};

std::vector<kafka_create_topic_call> create_topics_calls(const kafka::struct_value& body);

// What validateOnly answers for `spec` against `md` without creating it: the name, an internal
// or existing topic, and validate_topic_spec with the live brokers; -1 counts as valid, since
// the defaults are the controller's to apply.
error validate_create_topic(const topic_spec& spec, const cluster_metadata& md);

// The controller answers a creation with the topic's name and id alone; from v5 Kafka's answer
// also carries its partition count, replication factor and overrides. Fills those of each
// created topic in `results` from `md`, this node's metadata after the creation caught up
// (handlers/metadata_catch_up.hpp); a topic `md` does not show with the same id keeps none.
void complete_created_topics(std::vector<answer<topic_metadata>>& results,
                             const cluster_metadata& md);

// REQUIRES: `results` holds one answer per topic of `req`, in order. A created topic is answered
// with its id from every version that has TopicId (v7).
kafka::struct_value create_topics_response_body(const std::vector<answer<topic_metadata>>& results,
                                                const kafka::request& req);

// REQUIRES: `req` is a decoded CreateTopics request at an offered version.
kj::Promise<bytes> serve_kafka_create_topics(const client_session& s, kafka::request req);

} // namespace capstan
