#include "runtime/storage/log_config.hpp"

#include <charconv>
#include <functional>
#include <limits>
#include <optional>
#include <system_error>

namespace capstan {

namespace {

result<int64_t> parse_long(const std::string& key, const std::string& text, int64_t min,
                           int64_t max) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size())
    return make_error(errc::invalid_config, key + ": '" + text + "' is not an integer");
  if (v < min || v > max)
    return make_error(errc::invalid_config, key + ": " + text + " is outside [" +
                                              std::to_string(min) + ", " + std::to_string(max) + "]");
  return v;
}

result<double> parse_ratio(const std::string& key, const std::string& text) {
  try {
    size_t used = 0;
    double v = std::stod(text, &used);
    if (used == text.size() && v >= 0.0 && v <= 1.0) return v;
  } catch (const std::exception&) {
  }
  return make_error(errc::invalid_config, key + ": '" + text + "' is not a number in [0, 1]");
}

// Kafka's cleanup.policy is a list: "delete", "compact", or both in either order (spaces around
// the comma allowed, each named once).
std::optional<cleanup_policy> parse_cleanup_policy(const std::string& text) {
  bool compact = false;
  bool remove = false;
  size_t from = 0;
  for (;;) {
    const size_t comma = text.find(',', from);
    const size_t end = comma == std::string::npos ? text.size() : comma;
    const size_t first = text.find_first_not_of(' ', from);
    const size_t last = text.find_last_not_of(' ', end == 0 ? 0 : end - 1);
    if (first == std::string::npos || first >= end || last < first) return std::nullopt;
    const auto item = text.substr(first, last - first + 1);
    bool& named = item == "compact" ? compact : remove;
    if ((item != "compact" && item != "delete") || named) return std::nullopt;
    named = true;
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  if (compact && remove) return cleanup_policy::compact_delete;
  return compact ? cleanup_policy::compact : cleanup_policy::delete_segments;
}

using setter = std::function<status(const std::string&, const std::string&)>;

// Every name of `scope` with the setter that parses its value into `c`: the one list from_map
// applies and known_keys names.
std::map<std::string, setter> setters_for(log_config& c, config_scope scope) {
  // Kafka declares these as int: a segment's positions must fit the uint32 index fields.
  constexpr int64_t int_max = std::numeric_limits<int32_t>::max();
  auto long_field = [&c](int64_t log_config::*field, int64_t min, int64_t max = std::numeric_limits<int64_t>::max()) -> setter {
    return [&c, field, min, max](const std::string& k, const std::string& v) -> status {
      auto parsed = parse_long(k, v, min, max);
      if (!parsed) return parsed.err();
      c.*field = *parsed;
      return {};
    };
  };
  // Minimums are Kafka 4's LogConfig validators, except segment.ms: Kafka 4 accepts 1 ms, which
  // rolls a segment (three open files) per append; capstan takes the one minute KIP-1030 sets for
  // Kafka 5.
  std::map<std::string, setter> setters = {
    {"segment.bytes", long_field(&log_config::segment_bytes, 1048576, int_max)},
    {"segment.ms", long_field(&log_config::segment_ms, 60000)},
    {"retention.ms", long_field(&log_config::retention_ms, -1)},
    {"retention.bytes", long_field(&log_config::retention_bytes, -1)},
    {"index.interval.bytes", long_field(&log_config::index_interval_bytes, 0, int_max)},
    {"max.message.bytes", long_field(&log_config::max_message_bytes, 0, int_max)},
    {"flush.messages", long_field(&log_config::flush_messages, 1)},
    {"flush.ms", long_field(&log_config::flush_ms, 0)},
    {"delete.retention.ms", long_field(&log_config::delete_retention_ms, 0)},
    {"message.timestamp.before.max.ms", long_field(&log_config::timestamp_before_max_ms, 0)},
    {"message.timestamp.after.max.ms", long_field(&log_config::timestamp_after_max_ms, 0)},
    {"cleanup.policy",
     [&c](const std::string& k, const std::string& v) -> status {
       auto parsed = parse_cleanup_policy(v);
       if (!parsed)
         return make_error(errc::invalid_config,
                           k + ": '" + v + "' is not delete, compact or compact,delete");
       c.cleanup = *parsed;
       return {};
     }},
    {"min.cleanable.dirty.ratio",
     [&c](const std::string& k, const std::string& v) -> status {
       auto parsed = parse_ratio(k, v);
       if (!parsed) return parsed.err();
       c.min_cleanable_dirty_ratio = *parsed;
       return {};
     }},
  };
  if (scope == config_scope::broker) {
    setters.emplace("log.retention.check.interval.ms",
                    long_field(&log_config::retention_check_interval_ms, min_schedule_interval_ms));
    setters.emplace("log.cleaner.backoff.ms",
                    long_field(&log_config::cleaner_backoff_ms, min_schedule_interval_ms));
    setters.emplace("producer.id.expiration.ms", long_field(&log_config::producer_id_expiration_ms, 1));
  }
  return setters;
}

// A ratio as Kafka (Java) prints a double: the shortest digits that read back ("0.5", not
// std::to_string's "0.500000"), with ".0" on a whole number.
std::string java_double_text(double v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string text(buf, ec == std::errc{} ? end : buf);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

} // namespace

result<log_config> log_config::from_map(const std::map<std::string, std::string>& values,
                                        log_config base, config_scope scope) {
  log_config c = base;
  const auto setters = setters_for(c, scope);
  for (const auto& [key, value] : values) {
    auto it = setters.find(key);
    if (it == setters.end()) return make_error(errc::invalid_config, "unknown config '" + key + "'");
    if (auto st = it->second(key, value); !st) return st.err();
  }
  return c;
}

std::set<std::string> log_config::known_keys(config_scope scope) {
  log_config unused;
  std::set<std::string> out;
  for (const auto& [key, set] : setters_for(unused, scope)) out.insert(key);
  return out;
}

std::map<std::string, std::string> log_config::to_map() const {
  return {
    {"segment.bytes", std::to_string(segment_bytes)},
    {"segment.ms", std::to_string(segment_ms)},
    {"retention.ms", std::to_string(retention_ms)},
    {"retention.bytes", std::to_string(retention_bytes)},
    {"index.interval.bytes", std::to_string(index_interval_bytes)},
    {"max.message.bytes", std::to_string(max_message_bytes)},
    {"flush.messages", std::to_string(flush_messages)},
    {"flush.ms", std::to_string(flush_ms)},
    {"cleanup.policy", cleanup == cleanup_policy::compact          ? "compact"
                       : cleanup == cleanup_policy::compact_delete ? "compact,delete"
                                                                   : "delete"},
    {"delete.retention.ms", std::to_string(delete_retention_ms)},
    {"min.cleanable.dirty.ratio", java_double_text(min_cleanable_dirty_ratio)},
    {"message.timestamp.before.max.ms", std::to_string(timestamp_before_max_ms)},
    {"message.timestamp.after.max.ms", std::to_string(timestamp_after_max_ms)},
  };
}

} // namespace capstan
