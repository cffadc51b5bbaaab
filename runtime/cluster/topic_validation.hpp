#pragma once

// Topic validation beyond runtime/cluster/metadata.hpp's declarations: the limits, and the
// config check that createTopic and alterConfigs share.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "runtime/result.hpp"

namespace capstan {

inline constexpr size_t max_topic_name_length = 249;
inline constexpr int32_t max_topic_partitions = 10000;
// A topic config that log_config does not hold: acks=all needs at least this many in-sync replicas.
inline constexpr const char* min_insync_replicas_key = "min.insync.replicas";

// Topic-level configs: every key log_config::from_map accepts, plus min.insync.replicas (>= 1,
// as Kafka checks it). INVALID_CONFIG naming the first bad key.
status validate_topic_configs(const std::map<std::string, std::string>& configs);

// Parses min.insync.replicas; INVALID_CONFIG unless an integer in [1, 2^31-1].
result<int32_t> parse_min_insync_replicas(const std::string& text);

} // namespace capstan
