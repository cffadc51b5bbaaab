#include "runtime/cluster/topic_validation.hpp"

#include <charconv>
#include <limits>

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

status validate_topic_configs(const std::map<std::string, std::string>& configs) {
  std::map<std::string, std::string> log_configs = configs;
  if (auto it = log_configs.find(min_insync_replicas_key); it != log_configs.end()) {
    if (auto parsed = parse_min_insync_replicas(it->second); !parsed) return parsed.err();
    log_configs.erase(it);
  }
  if (auto parsed = log_config::from_map(log_configs); !parsed) return parsed.err();
  return {};
}

status validate_topic_spec(const topic_spec& spec, size_t live_brokers) {
  if (auto s = validate_topic_name(spec.name); !s) return s;
  if (spec.partitions < 1 || spec.partitions > max_topic_partitions)
    return make_error(errc::invalid_partitions,
                      "number of partitions must be in [1, " +
                        std::to_string(max_topic_partitions) + "], not " +
                        std::to_string(spec.partitions));
  if (spec.replication_factor < 1 || static_cast<size_t>(spec.replication_factor) > live_brokers)
    return make_error(errc::invalid_replication_factor,
                      "replication factor " + std::to_string(spec.replication_factor) +
                        " must be between 1 and the number of live brokers (" +
                        std::to_string(live_brokers) + ")");
  return validate_topic_configs(spec.configs);
}

} // namespace capstan
