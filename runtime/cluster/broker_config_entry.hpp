#pragma once

// One of a node's configs as Kafka's DescribeConfigs shows a broker resource naming the node
// (docs/kafka.md, "Topic administration"): its Kafka name, its value as text, and where the
// value came from. node_config::broker_configs renders them; the gateway answers from them.

#include <cstdint>
#include <optional>
#include <string>

namespace capstan {

// Kafka's ConfigSource values for a broker's static configuration (capstan has no dynamic
// broker configs).
enum class broker_config_source : int8_t {
  static_broker_config = 4, // set in the config file or by a command-line flag
  default_config = 5,       // left at its default
};

struct broker_config_entry {
  std::string name;
  // Null where the key has no value of its own: a coarser unit (log.retention.hours) the
  // setting is not a whole multiple of, or advertised.listeners when not set.
  std::optional<std::string> value;
  broker_config_source source = broker_config_source::default_config;
};

} // namespace capstan
