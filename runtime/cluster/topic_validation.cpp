#include "runtime/cluster/topic_validation.hpp"

#include <algorithm>
#include <charconv>
#include <limits>

#include <sys/resource.h>

#include "runtime/cluster/metadata.hpp"
#include "runtime/storage/log_config.hpp"

namespace capstan {

namespace {

bool legal_topic_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

error invalid_topic(const std::string& why) {
  return make_error(errc::invalid_topic_exception, why);
}

} // namespace

status validate_topic_name(const std::string& name) {
  if (name.empty()) return invalid_topic("topic name is empty");
  if (name == "." || name == "..")
    return invalid_topic("topic name cannot be '.' or '..'");
  if (name.size() > max_topic_name_length)
    return invalid_topic("topic name is " + std::to_string(name.size()) +
                         " characters long, the limit is " + std::to_string(max_topic_name_length));
  for (char c : name) {
    if (!legal_topic_char(c))
      return invalid_topic("topic name '" + name +
                           "' contains a character other than ASCII letters, digits, '.', '_' "
                           "and '-'");
  }
  return {};
}

bool is_internal_topic(const std::string& name) { return name == consumer_offsets_topic; }

status check_topic_collision(const std::string& name, const std::vector<std::string>& existing) {
  auto unified = [](std::string s) {
    for (auto& c : s)
      if (c == '.') c = '_';
    return s;
  };
  const auto wanted = unified(name);
  for (const auto& other : existing) {
    if (other != name && unified(other) == wanted)
      return invalid_topic("Topic '" + name + "' collides with existing topic: " + other);
  }
  return {};
}

result<int32_t> parse_min_insync_replicas(const std::string& text) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || v < 1 ||
      v > std::numeric_limits<int32_t>::max())
    return make_error(errc::invalid_config, std::string(min_insync_replicas_key) + ": '" + text +
                                              "' is not an integer of at least 1");
  return static_cast<int32_t>(v);
}

result<int64_t> parse_throttled_rate(const std::string& text) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || v < 1)
    return make_error(errc::invalid_config, std::string(leader_throttle_key) + ": '" + text +
                                              "' is not a number of bytes per second of at least 1");
  return v;
}

result<bool> parse_boolean_config(const std::string& key, const std::string& text) {
  std::string lower = text;
  for (auto& c : lower)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  if (lower == "true") return true;
  if (lower == "false") return false;
  return make_error(errc::invalid_config, key + ": '" + text + "' is not true or false");
}

int32_t max_broker_partitions_for(uint64_t open_file_limit) {
  if (open_file_limit <= reserved_file_descriptors + file_descriptors_per_partition) return 1;
  const uint64_t n = (open_file_limit - reserved_file_descriptors) / file_descriptors_per_partition;
  return static_cast<int32_t>(std::min<uint64_t>(n, std::numeric_limits<int32_t>::max()));
}

int32_t default_max_broker_partitions() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
    return std::numeric_limits<int32_t>::max();
  return max_broker_partitions_for(static_cast<uint64_t>(limit.rlim_cur));
}

status check_broker_partition_limit(const std::map<std::string, topic_metadata>& topics,
                                    const std::vector<partition_assignment>& added, int32_t limit) {
  std::map<int32_t, int64_t> added_per_node;
  for (const auto& p : added)
    for (int32_t node : p.replicas) ++added_per_node[node];
  for (const auto& [node, more] : added_per_node) {
    int64_t hosted = 0;
    for (const auto& [name, topic] : topics)
      for (const auto& p : topic.partitions)
        hosted += std::count(p.replicas.begin(), p.replicas.end(), node);
    if (hosted + more > limit)
      return make_error(errc::policy_violation,
                        "node " + std::to_string(node) + " hosts " + std::to_string(hosted) +
                          " partitions; " + std::to_string(more) + " more would pass its " +
                          max_broker_partitions_key + " of " + std::to_string(limit));
  }
  return {};
}

status validate_topic_configs(const std::map<std::string, std::string>& configs) {
  std::map<std::string, std::string> log_configs = configs;
  if (auto it = log_configs.find(min_insync_replicas_key); it != log_configs.end()) {
    if (auto parsed = parse_min_insync_replicas(it->second); !parsed) return parsed.err();
    log_configs.erase(it);
  }
  if (auto it = log_configs.find(unclean_leader_election_key); it != log_configs.end()) {
    if (auto parsed = parse_boolean_config(it->first, it->second); !parsed) return parsed.err();
    log_configs.erase(it);
  }
  if (auto it = log_configs.find(leader_throttle_key); it != log_configs.end()) {
    if (auto parsed = parse_throttled_rate(it->second); !parsed) return parsed.err();
    log_configs.erase(it);
  }
  if (auto parsed = log_config::from_map(log_configs); !parsed) return parsed.err();
  return {};
}

result<std::map<std::string, std::string>> altered_topic_configs(
  std::map<std::string, std::string> overrides, const std::map<std::string, std::string>& set,
  const std::vector<std::string>& deleted) {
  const auto known = topic_config_keys();
  std::set<std::string> seen;
  for (const auto& key : deleted) {
    if (set.count(key) != 0)
      return make_error(errc::invalid_config, "config '" + key + "' is both set and deleted");
    if (known.count(key) == 0)
      return make_error(errc::invalid_config, "unknown topic config '" + key + "'");
    if (!seen.insert(key).second)
      return make_error(errc::invalid_config, "config '" + key + "' is deleted twice");
    overrides.erase(key);
  }
  for (const auto& [key, value] : set) overrides[key] = value;
  if (auto s = validate_topic_configs(overrides); !s) return s.err();
  return overrides;
}

std::set<std::string> topic_config_keys() {
  auto keys = log_config::known_keys(config_scope::topic);
  keys.insert(min_insync_replicas_key);
  keys.insert(unclean_leader_election_key);
  keys.insert(leader_throttle_key);
  return keys;
}

status validate_topic_spec(const topic_spec& spec, size_t live_brokers) {
  if (auto s = validate_topic_name(spec.name); !s) return s;
  if (spec.partitions < 1)
    return make_error(errc::invalid_partitions,
                      "number of partitions must be at least 1, not " +
                        std::to_string(spec.partitions));
  if (spec.partitions > max_topic_partitions)
    return make_error(errc::policy_violation,
                      "a topic has at most " + std::to_string(max_topic_partitions) +
                        " partitions, not " + std::to_string(spec.partitions));
  if (spec.replication_factor < 1 || static_cast<size_t>(spec.replication_factor) > live_brokers)
    return make_error(errc::invalid_replication_factor,
                      "replication factor " + std::to_string(spec.replication_factor) +
                        " must be between 1 and the number of live brokers (" +
                        std::to_string(live_brokers) + ")");
  return validate_topic_configs(spec.configs);
}

} // namespace capstan
