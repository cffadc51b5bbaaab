#pragma once

// Kafka DescribeConfigs (versions 1-4). A topic resource goes through the shared
// describe-configs handler (handlers/describe_configs_handler.hpp), one call per topic: its
// effective configs, overrides with ConfigSource DYNAMIC_TOPIC_CONFIG, the rest DEFAULT_CONFIG.
// A broker resource is answered on the spot, as Kafka's broker answers it (ConfigHelper): the
// name of this node's id gets the node's configuration (rpc_targets::broker_configs), read-only;
// an empty name the cluster-wide dynamic defaults, of which capstan has none; another node's id
// or a name that is not a number INVALID_REQUEST. Other resource types are INVALID_REQUEST. No
// synonyms and no documentation are sent.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <kj/async.h>

#include "actors/gateway/handlers/handler_support.hpp"
#include "runtime/cluster/broker_config_entry.hpp"
#include "runtime/cluster/metadata.hpp"
#include "runtime/kafka/message_header.hpp"

namespace capstan {

// Kafka's ResourceType for a topic and for a broker.
inline constexpr int64_t kafka_topic_resource = 2;
inline constexpr int64_t kafka_broker_resource = 4;

// One config of a resource's answer, as the response carries it.
struct kafka_config_entry {
  std::string name;
  std::optional<std::string> value; // null: no value of its own
  int64_t source = 5;               // Kafka's ConfigSource (5: DEFAULT_CONFIG)
  bool read_only = false;
};

// One resource's answer: its configs, or why it has none.
using kafka_config_resource = answer<std::vector<kafka_config_entry>>;

// A topic's answer from the describe-configs handler's: `overrides` are the topic's own configs.
kafka_config_resource topic_config_resource(answer<std::map<std::string, std::string>> configs,
                                            const std::map<std::string, std::string>& overrides);

// A broker resource named `name` asked of node `self`, whose configuration is `configs`:
// `configs` (read-only) for self's id, none for an empty name, INVALID_REQUEST otherwise.
kafka_config_resource broker_config_resource(const std::string& name, int32_t self,
                                             const std::vector<broker_config_entry>& configs);

// REQUIRES: `results` holds one answer per resource of `req`, in order. ConfigurationKeys,
// when not null, narrows each resource's configs to the keys named.
kafka::struct_value
describe_configs_response_body(const std::vector<kafka_config_resource>& results,
                               const kafka::request& req);

// REQUIRES: `req` is a decoded DescribeConfigs request at an offered version.
kj::Promise<bytes> serve_kafka_describe_configs(const client_session& s, kafka::request req);

} // namespace capstan
