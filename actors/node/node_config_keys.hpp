#pragma once

// The key table node_config.cpp applies a TOML config with, as node_config_show.cpp reads it to
// show a config (node_config::broker_configs). Internal to actors/node.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "actors/node/node.hpp"

namespace capstan::node_config_keys {

// Broker log defaults and the topic config each one sets (log.retention.ms: retention.ms).
const std::map<std::string, std::string>& log_defaults();
// Kafka's coarser units of those: the topic config each sets and its factor to milliseconds.
const std::map<std::string, std::pair<std::string, int64_t>>& log_scaled();
// Kafka's synonyms among the other keys: (the name the setting goes by, its synonym).
std::vector<std::pair<std::string, std::string>> synonyms();
// Every key besides the two maps above, with its value in `c` as Kafka shows it: numbers and
// booleans printed, lists comma-joined; nullopt where the key has no value of its own.
std::map<std::string, std::optional<std::string>> shown(const node_config& c);

} // namespace capstan::node_config_keys
