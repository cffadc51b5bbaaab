#pragma once

// Kafka DescribeConfigs (versions 1-4) through the shared describe-configs handler
// (handlers/describe_configs_handler.hpp), one call per topic resource. A topic's configs are
// its effective ones: overrides answer ConfigSource DYNAMIC_TOPIC_CONFIG, the rest
// DEFAULT_CONFIG. Broker resources are answered INVALID_REQUEST: the node's configuration is
// not reachable from the gateway. No synonyms and no documentation are sent.

#include <map>
#include <string>
#include <vector>

#include <kj/async.h>

#include "actors/gateway/handlers/handler_support.hpp"
#include "runtime/cluster/metadata.hpp"
#include "runtime/kafka/message_header.hpp"

namespace capstan {

// Kafka's ResourceType for a topic.
inline constexpr int64_t kafka_topic_resource = 2;

// One resource's answer: its effective configs, and which of them the topic overrides.
struct kafka_config_resource {
  answer<std::map<std::string, std::string>> configs;
  std::map<std::string, std::string> overrides;
};

// REQUIRES: `results` holds one answer per resource of `req`, in order. ConfigurationKeys,
// when not null, narrows each resource's configs to the keys named.
kafka::struct_value
describe_configs_response_body(const std::vector<kafka_config_resource>& results,
                               const kafka::request& req);

// REQUIRES: `req` is a decoded DescribeConfigs request at an offered version.
kj::Promise<bytes> serve_kafka_describe_configs(const client_session& s, kafka::request req);

} // namespace capstan
