// node_config::broker_configs: a node's configuration as Kafka's DescribeConfigs shows a broker
// resource naming it (docs/kafka.md, "Topic administration"), from the key table
// (node_config_keys.hpp) and the keys the config file and flags gave (node_config::given_keys).

#include <algorithm>
#include <set>

#include "actors/node/node.hpp"
#include "actors/node/node_config_keys.hpp"

namespace capstan {

namespace {

// The setting a key names: a synonym or a coarser unit names the one its main name does
// (broker.id: node.id, log.retention.hours: retention.ms), any other key itself.
std::string setting_of(const std::string& key) {
  for (const auto& [name, synonym] : node_config_keys::synonyms())
    if (key == synonym) return name;
  const auto& scaled = node_config_keys::log_scaled();
  if (auto it = scaled.find(key); it != scaled.end()) return it->second.first;
  const auto& log = node_config_keys::log_defaults();
  if (auto it = log.find(key); it != log.end()) return it->second;
  return key;
}

// The broker log default that sets topic config `topic_key`, as Kafka prints it.
std::string log_default_text(const log_config& d, const std::string& topic_key) {
  if (topic_key == "log.retention.check.interval.ms") return std::to_string(d.retention_check_interval_ms);
  if (topic_key == "log.cleaner.backoff.ms") return std::to_string(d.cleaner_backoff_ms);
  if (topic_key == "producer.id.expiration.ms") return std::to_string(d.producer_id_expiration_ms);
  return d.to_map().at(topic_key);
}

// A coarser unit of a millisecond setting: its value in that unit when a whole number of them.
std::optional<std::string> scaled_text(const log_config& d, const std::string& topic_key,
                                       int64_t factor) {
  const auto ms = std::stoll(log_default_text(d, topic_key));
  if (ms < 0 || ms % factor != 0) return std::nullopt;
  return std::to_string(ms / factor);
}

} // namespace

std::vector<broker_config_entry> node_config::broker_configs() const {
  std::set<std::string> given_settings;
  for (const auto& key : given_keys) given_settings.insert(setting_of(key));
  auto entry = [&](const std::string& key, std::optional<std::string> value) {
    return broker_config_entry{key, std::move(value),
                               given_settings.contains(setting_of(key))
                                   ? broker_config_source::static_broker_config
                                   : broker_config_source::default_config};
  };
  std::vector<broker_config_entry> out;
  for (auto& [key, value] : node_config_keys::shown(*this)) out.push_back(entry(key, std::move(value)));
  for (const auto& [key, topic_key] : node_config_keys::log_defaults())
    out.push_back(entry(key, log_default_text(log_defaults, topic_key)));
  for (const auto& [key, scaled] : node_config_keys::log_scaled())
    out.push_back(entry(key, scaled_text(log_defaults, scaled.first, scaled.second)));
  std::sort(out.begin(), out.end(),
            [](const broker_config_entry& a, const broker_config_entry& b) { return a.name < b.name; });
  return out;
}

} // namespace capstan
