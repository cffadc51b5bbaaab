// node_config::from_toml_file and from_toml: TOML of Kafka broker config names
// (docs/configuration.md).
// Dotted keys and nested tables are the same thing in TOML (`log.retention.ms = 1` is
// `[log] retention.ms = 1`), so the file is flattened to dotted names before it is applied.

#include "actors/node/node.hpp"

#include <charconv>
#include <functional>
#include <limits>
#include <sstream>

#include <toml++/toml.h>

#include "actors/node/listen_address.hpp"
#include "runtime/cluster/topic_validation.hpp"

namespace capstan {

namespace {

// Broker log defaults and the topic config each one sets (Kafka's names on both sides).
const std::map<std::string, std::string>& log_default_keys() {
  static const std::map<std::string, std::string> keys = {
    {"log.segment.bytes", "segment.bytes"},
    {"log.roll.ms", "segment.ms"},
    {"log.retention.ms", "retention.ms"},
    {"log.retention.bytes", "retention.bytes"},
    {"log.index.interval.bytes", "index.interval.bytes"},
    {"log.flush.interval.messages", "flush.messages"},
    {"log.flush.interval.ms", "flush.ms"},
    {"log.cleanup.policy", "cleanup.policy"},
    {"log.cleaner.delete.retention.ms", "delete.retention.ms"},
    {"log.cleaner.min.cleanable.ratio", "min.cleanable.dirty.ratio"},
    {"message.max.bytes", "max.message.bytes"},
    {"log.retention.check.interval.ms", "log.retention.check.interval.ms"},
    {"log.cleaner.backoff.ms", "log.cleaner.backoff.ms"},
  };
  return keys;
}

// Kafka's coarser units for the same settings: value times the factor, in ms.
const std::map<std::string, std::pair<std::string, int64_t>>& log_scaled_keys() {
  static const std::map<std::string, std::pair<std::string, int64_t>> keys = {
    {"log.roll.hours", {"segment.ms", 3600000}},
    {"log.retention.minutes", {"retention.ms", 60000}},
    {"log.retention.hours", {"retention.ms", 3600000}},
  };
  return keys;
}

// The value as text: strings as they are, numbers and booleans printed, arrays comma-joined.
std::optional<std::string> scalar_text(const toml::node& n) {
  if (auto s = n.value<std::string>(); s && n.is_string()) return *s;
  if (n.is_integer()) return std::to_string(*n.value<int64_t>());
  if (n.is_boolean()) return *n.value<bool>() ? std::string("true") : std::string("false");
  if (n.is_floating_point()) {
    std::ostringstream out;
    out << *n.value<double>();
    return out.str();
  }
  if (const auto* arr = n.as_array()) {
    std::string out;
    for (const auto& e : *arr) {
      auto t = scalar_text(e);
      if (!t || e.is_array()) return std::nullopt;
      if (!out.empty()) out += ',';
      out += *t;
    }
    return out;
  }
  return std::nullopt;
}

status flatten(const toml::table& t, const std::string& prefix,
               std::map<std::string, std::string>& out) {
  for (const auto& [k, v] : t) {
    std::string key = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
    if (const auto* sub = v.as_table()) {
      if (auto s = flatten(*sub, key, out); !s) return s;
      continue;
    }
    auto text = scalar_text(v);
    if (!text) return make_error(errc::invalid_config, key + ": unsupported value type");
    out[key] = *text;
  }
  return {};
}

result<int64_t> parse_int(const std::string& key, const std::string& text, int64_t min, int64_t max) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || v < min || v > max)
    return make_error(errc::invalid_config, key + ": '" + text + "' is not an integer in [" +
                                              std::to_string(min) + ", " + std::to_string(max) + "]");
  return v;
}

// Applies one broker log default; errors name the broker key.
status apply_log_default(node_config& c, const std::string& key, const std::string& topic_key,
                         const std::string& value) {
  auto applied = log_config::from_map({{topic_key, value}}, c.log_defaults);
  if (!applied) {
    auto message = applied.err().message;
    if (message.rfind(topic_key, 0) == 0) message = key + message.substr(topic_key.size());
    return make_error(errc::invalid_config, message);
  }
  c.log_defaults = *applied;
  return {};
}

status apply_key(node_config& c, const std::string& key, const std::string& value) {
  constexpr int64_t int32_max = std::numeric_limits<int32_t>::max();
  auto set_int = [&](auto& field, int64_t min, int64_t max) -> status {
    auto v = parse_int(key, value, min, max);
    if (!v) return v.err();
    field = static_cast<std::remove_reference_t<decltype(field)>>(*v);
    return {};
  };
  auto set_address = [&](std::string& field) -> status {
    if (value.find(',') != std::string::npos)
      return make_error(errc::invalid_config, key + ": one listener only, not '" + value + "'");
    auto parsed = parse_listen_address(value, key);
    if (!parsed) return parsed.err();
    field = value;
    return {};
  };
  if (key == "node.id" || key == "broker.id") return set_int(c.node_id, 0, int32_max);
  if (key == "log.dirs" || key == "log.dir") {
    if (value.empty() || value.find(',') != std::string::npos)
      return make_error(errc::invalid_config, key + ": exactly one data dir, not '" + value + "'");
    c.data_dir = value;
    return {};
  }
  if (key == "listeners") return set_address(c.listen);
  if (key == "cluster.listeners") return set_address(c.cluster_listen);
  if (key == "metrics.listeners") return set_address(c.metrics_listen);
  if (key == "controller.quorum.voters") {
    c.controller_quorum = value;
    return {};
  }
  if (key == "cluster.id") {
    c.cluster_id = value;
    return {};
  }
  if (key == min_insync_replicas_key) return set_int(c.min_insync_replicas, 1, int32_max);
  if (key == "num.partitions") return set_int(c.default_partitions, 1, max_topic_partitions);
  if (key == "default.replication.factor")
    return set_int(c.default_replication_factor, 1, std::numeric_limits<int16_t>::max());
  if (key == "offsets.topic.num.partitions")
    return set_int(c.offsets_topic_partitions, 1, max_topic_partitions);
  if (key == "num.io.threads") return set_int(c.scheduler_threads, 1, 256);
  if (auto it = log_default_keys().find(key); it != log_default_keys().end())
    return apply_log_default(c, key, it->second, value);
  if (auto it = log_scaled_keys().find(key); it != log_scaled_keys().end()) {
    auto v = parse_int(key, value, 1, std::numeric_limits<int64_t>::max() / it->second.second);
    if (!v) return v.err();
    return apply_log_default(c, key, it->second.first, std::to_string(*v * it->second.second));
  }
  return make_error(errc::invalid_config, "unknown config '" + key + "'");
}

// Applies a parsed file; `source` prefixes error messages.
result<node_config> apply_table(const toml::table& root, const std::string& source,
                                node_config base) {
  std::map<std::string, std::string> flat;
  if (auto s = flatten(root, "", flat); !s)
    return make_error(errc::invalid_config, source + ": " + s.err().message);
  // log.roll.ms and log.retention.ms win over their coarser forms, as in Kafka: apply the coarse
  // ones first.
  std::vector<std::pair<std::string, std::string>> ordered;
  for (const auto& kv : flat)
    if (log_scaled_keys().count(kv.first) != 0) ordered.push_back(kv);
  for (const auto& kv : flat)
    if (log_scaled_keys().count(kv.first) == 0) ordered.push_back(kv);
  node_config c = std::move(base);
  for (const auto& [key, value] : ordered) {
    if (auto s = apply_key(c, key, value); !s)
      return make_error(errc::invalid_config, source + ": " + s.err().message);
  }
  return c;
}

error parse_failure(const toml::parse_error& e, const std::string& source) {
  std::ostringstream where;
  where << e.source().begin;
  return make_error(errc::invalid_config,
                    source + ": " + std::string(e.description()) + " at " + where.str());
}

} // namespace

result<node_config> node_config::from_toml_file(const std::filesystem::path& file, node_config base) {
  toml::table root;
  try {
    root = toml::parse_file(file.string());
  } catch (const toml::parse_error& e) {
    return parse_failure(e, file.string());
  }
  return apply_table(root, file.string(), std::move(base));
}

result<node_config> node_config::from_toml(std::string_view text, const std::string& source,
                                           node_config base) {
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    return parse_failure(e, source);
  }
  return apply_table(root, source, std::move(base));
}

} // namespace capstan
