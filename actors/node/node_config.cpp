// node_config::from_toml_file and from_toml: TOML of Kafka broker config names
// (docs/configuration.md).
// Dotted keys and nested tables are the same thing in TOML (`log.retention.ms = 1` is
// `[log] retention.ms = 1`), so the file is flattened to dotted names before it is applied. Each
// value keeps its TOML type, and each key takes one: a number where a path belongs is refused,
// not turned into a directory named "5".

#include "actors/node/node.hpp"

#include <charconv>
#include <functional>
#include <initializer_list>
#include <limits>
#include <optional>
#include <sstream>
#include <type_traits>
#include <vector>

#include <toml++/toml.h>

#include "actors/node/controller_quorum.hpp"
#include "actors/node/listen_address.hpp"
#include "actors/node/node_config_keys.hpp"
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
    {"log.message.timestamp.before.max.ms", "message.timestamp.before.max.ms"},
    {"log.message.timestamp.after.max.ms", "message.timestamp.after.max.ms"},
    {"log.retention.check.interval.ms", "log.retention.check.interval.ms"},
    {"log.cleaner.backoff.ms", "log.cleaner.backoff.ms"},
    {"producer.id.expiration.ms", "producer.id.expiration.ms"},
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

// The TOML types a key may take.
enum class value_kind { string, integer, number, boolean, string_list, other };

struct flat_value {
  std::string text; // strings as they are, numbers and booleans printed, arrays comma-joined
  value_kind kind = value_kind::other;
};

value_kind kind_of(const toml::node& n) {
  if (n.is_string()) return value_kind::string;
  if (n.is_integer()) return value_kind::integer;
  if (n.is_floating_point()) return value_kind::number;
  if (n.is_boolean()) return value_kind::boolean;
  if (const auto* arr = n.as_array()) {
    for (const auto& e : *arr)
      if (!e.is_string()) return value_kind::other;
    return value_kind::string_list;
  }
  return value_kind::other;
}

std::string kind_name(value_kind k) {
  switch (k) {
  case value_kind::string: return "a string";
  case value_kind::integer: return "an integer";
  case value_kind::number: return "a floating-point number";
  case value_kind::boolean: return "a boolean";
  case value_kind::string_list: return "an array of strings";
  case value_kind::other: break;
  }
  return "an array of non-strings";
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

status flatten(const toml::table& t, const std::string& prefix, std::map<std::string, flat_value>& out) {
  for (const auto& [k, v] : t) {
    std::string key = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
    if (const auto* sub = v.as_table()) {
      if (auto s = flatten(*sub, key, out); !s) return s;
      continue;
    }
    auto text = scalar_text(v);
    if (!text) return make_error(errc::invalid_config, key + ": unsupported value type");
    out[key] = flat_value{*text, kind_of(v)};
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
  auto applied = log_config::from_map({{topic_key, value}}, c.log_defaults, config_scope::broker);
  if (!applied) {
    auto message = applied.err().message;
    if (message.rfind(topic_key, 0) == 0) message = key + message.substr(topic_key.size());
    return make_error(errc::invalid_config, message);
  }
  c.log_defaults = *applied;
  return {};
}

// INVALID_CONFIG unless `v` is of one of the kinds `allowed` (said as `expected`).
status check_kind(const std::string& key, const flat_value& v, std::initializer_list<value_kind> allowed,
                  const std::string& expected) {
  for (auto k : allowed)
    if (v.kind == k) return {};
  const std::string shown = v.kind == value_kind::string ? "\"" + v.text + "\"" : v.text;
  return make_error(errc::invalid_config, key + ": must be " + expected + ", not " + kind_name(v.kind) + " (" +
                                            shown + ")");
}

// The kinds a broker log default takes, by the topic config it sets.
status check_log_default_kind(const std::string& key, const std::string& topic_key, const flat_value& v) {
  if (topic_key == "cleanup.policy")
    return check_kind(key, v, {value_kind::string, value_kind::string_list}, "a string (\"delete\", \"compact\" or \"compact,delete\")");
  if (topic_key == "min.cleanable.dirty.ratio")
    return check_kind(key, v, {value_kind::number, value_kind::integer}, "a number");
  return check_kind(key, v, {value_kind::integer}, "an integer");
}

// Applies one key's value to a config; `key` is the name it was given under (error messages).
using key_setter = std::function<status(node_config&, const std::string& key, const flat_value&)>;
// A key's value in a config as Kafka's DescribeConfigs shows it; nullopt: none of its own.
using key_shower = std::function<std::optional<std::string>(const node_config&)>;

// A key of the table below: how it is applied and how it is shown.
struct node_key {
  key_setter set;
  key_shower show;
};

// The field `get(c)` printed; `get` takes a const or a mutable config.
template <class Get>
key_shower printed(Get get) {
  return [get](const node_config& c) -> std::optional<std::string> {
    const auto& field = get(c);
    if constexpr (std::is_same_v<std::decay_t<decltype(field)>, bool>)
      return std::string(field ? "true" : "false");
    else if constexpr (std::is_arithmetic_v<std::decay_t<decltype(field)>>)
      return std::to_string(field);
    else
      return std::string(field);
  };
}

// The integer field `get(c)` in [min, max].
template <class Get>
node_key int_key(Get get, int64_t min, int64_t max) {
  auto set = [get, min, max](node_config& c, const std::string& key, const flat_value& flat) -> status {
    if (auto s = check_kind(key, flat, {value_kind::integer}, "an integer"); !s) return s;
    auto v = parse_int(key, flat.text, min, max);
    if (!v) return v.err();
    auto& field = get(c);
    field = static_cast<std::remove_reference_t<decltype(field)>>(*v);
    return {};
  };
  return {set, printed(get)};
}

// The boolean field `get(c)`.
template <class Get>
node_key bool_key(Get get) {
  auto set = [get](node_config& c, const std::string& key, const flat_value& flat) -> status {
    if (auto s = check_kind(key, flat, {value_kind::boolean}, "a boolean"); !s) return s;
    get(c) = flat.text == "true";
    return {};
  };
  return {set, printed(get)};
}

template <class Get>
node_key text_key(Get get, std::string expected) {
  auto set = [get, expected](node_config& c, const std::string& key, const flat_value& flat) -> status {
    if (auto s = check_kind(key, flat, {value_kind::string}, expected); !s) return s;
    get(c) = flat.text;
    return {};
  };
  return {set, printed(get)};
}

template <class Get>
node_key address_key(Get get) {
  auto set = [get](node_config& c, const std::string& key, const flat_value& flat) -> status {
    if (auto s = check_kind(key, flat, {value_kind::string}, "a string \"HOST:PORT\""); !s) return s;
    if (flat.text.find(',') != std::string::npos)
      return make_error(errc::invalid_config, key + ": one listener only, not '" + flat.text + "'");
    auto parsed = parse_listen_address(flat.text, key);
    if (!parsed) return parsed.err();
    get(c) = flat.text;
    return {};
  };
  return {set, printed(get)};
}

// A listener entry's name ("PLAINTEXT" of "PLAINTEXT://HOST:PORT"); empty when it has none.
std::string listener_name(const std::string& entry) {
  auto scheme = entry.find("://");
  return scheme == std::string::npos ? std::string{} : entry.substr(0, scheme);
}

std::vector<std::string> split_listeners(const std::string& text) {
  std::vector<std::string> out;
  size_t from = 0;
  while (true) {
    auto comma = text.find(',', from);
    out.push_back(text.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
    if (comma == std::string::npos) return out;
    from = comma + 1;
  }
}

// listeners: Kafka's list of NAME://HOST:PORT. The PLAINTEXT entry is the Kafka listener, the
// CAPSTAN entry (or one without a name) the client RPC listener. As in Kafka, the list is every
// listener the node opens: without a PLAINTEXT entry the node has no Kafka listener.
status set_listeners(node_config& c, const std::string& key, const flat_value& flat) {
  if (auto s = check_kind(key, flat, {value_kind::string}, "a string \"NAME://HOST:PORT,...\""); !s)
    return s;
  std::string native;
  std::string kafka;
  for (const auto& entry : split_listeners(flat.text)) {
    auto parsed = parse_listen_address(entry, key);
    if (!parsed) return parsed.err();
    const auto name = listener_name(entry);
    auto& slot = name == "PLAINTEXT" ? kafka : native;
    if (name != "PLAINTEXT" && name != "CAPSTAN" && !name.empty())
      return make_error(errc::invalid_config,
                        key + ": listener '" + name + "' is neither PLAINTEXT (Kafka) nor CAPSTAN");
    if (!slot.empty())
      return make_error(errc::invalid_config, key + ": two " +
                                                  (name == "PLAINTEXT" ? "PLAINTEXT" : "CAPSTAN") +
                                                  " listeners in '" + flat.text + "'");
    slot = entry;
  }
  if (!native.empty()) c.listen = native;
  c.kafka_listen = kafka;
  return {};
}

// advertised.listeners: where Kafka clients reach the PLAINTEXT listener, one entry.
status set_advertised_listeners(node_config& c, const std::string& key, const flat_value& flat) {
  if (auto s = check_kind(key, flat, {value_kind::string}, "a string \"PLAINTEXT://HOST:PORT\""); !s)
    return s;
  if (flat.text.find(',') != std::string::npos)
    return make_error(errc::invalid_config, key + ": one listener only, not '" + flat.text + "'");
  const auto name = listener_name(flat.text);
  if (name != "PLAINTEXT" && !name.empty())
    return make_error(errc::invalid_config,
                      key + ": only the PLAINTEXT (Kafka) listener is advertised, not '" + name + "'");
  auto parsed = parse_listen_address(flat.text, key);
  if (!parsed) return parsed.err();
  if (parsed->port == 0)
    return make_error(errc::invalid_config, key + ": port 0 cannot be reached");
  c.kafka_advertised = flat.text;
  return {};
}

status set_data_dir(node_config& c, const std::string& key, const flat_value& flat) {
  if (auto s = check_kind(key, flat, {value_kind::string, value_kind::string_list}, "a string (a directory)"); !s)
    return s;
  if (flat.text.empty() || flat.text.find(',') != std::string::npos)
    return make_error(errc::invalid_config, key + ": exactly one data dir, not '" + flat.text + "'");
  c.data_dir = flat.text;
  return {};
}

status set_scheduler_policy(node_config& c, const std::string& key, const flat_value& flat) {
  if (auto s = check_kind(key, flat, {value_kind::string}, "\"sharing\" or \"work-stealing\""); !s)
    return s;
  if (flat.text != "sharing" && flat.text != "work-stealing")
    return make_error(errc::invalid_config,
                      key + ": \"sharing\" or \"work-stealing\", not '" + flat.text + "'");
  c.scheduler_sharing = flat.text == "sharing";
  return {};
}

status set_process_roles(node_config& c, const std::string& key, const flat_value& flat) {
  if (auto s = check_kind(key, flat, {value_kind::string, value_kind::string_list},
                          "a string (\"broker\" or \"broker,controller\")");
      !s)
    return s;
  if (auto roles = parse_process_roles(flat.text); !roles) return roles.err();
  c.process_roles = flat.text;
  return {};
}

// A listener address without its "NAME://", if it has one.
std::string without_listener_name(const std::string& entry) {
  auto scheme = entry.find("://");
  return scheme == std::string::npos ? entry : entry.substr(scheme + 3);
}

// listeners as Kafka shows it: the Kafka listener (if any) and the client RPC listener.
std::optional<std::string> show_listeners(const node_config& c) {
  std::string out;
  if (!c.kafka_listen.empty()) out = "PLAINTEXT://" + without_listener_name(c.kafka_listen) + ",";
  return out + "CAPSTAN://" + without_listener_name(c.listen);
}

// advertised.listeners: null when not set, as Kafka shows it (clients are then told the
// listener's own address).
std::optional<std::string> show_advertised_listeners(const node_config& c) {
  if (c.kafka_advertised.empty()) return std::nullopt;
  return "PLAINTEXT://" + without_listener_name(c.kafka_advertised);
}

std::optional<std::string> show_data_dir(const node_config& c) { return c.data_dir.string(); }

std::optional<std::string> show_scheduler_policy(const node_config& c) {
  return std::string(c.scheduler_sharing ? "sharing" : "work-stealing");
}

std::optional<std::string> show_process_roles(const node_config& c) { return c.process_roles; }

// Every key apply_key takes besides the broker log defaults, with its setter and shower: the one
// list that applies keys, names them and shows them (node_config::broker_configs) (node_config::known_keys).
const std::map<std::string, node_key>& node_keys() {
  constexpr int64_t int32_max = std::numeric_limits<int32_t>::max();
  static const std::map<std::string, node_key> keys = {
    {"node.id", int_key([](auto& c) -> auto& { return c.node_id; }, 0, int32_max)},
    {"broker.id", int_key([](auto& c) -> auto& { return c.node_id; }, 0, int32_max)},
    {"log.dirs", {set_data_dir, show_data_dir}},
    {"log.dir", {set_data_dir, show_data_dir}},
    {"listeners", {set_listeners, show_listeners}},
    {"advertised.listeners", {set_advertised_listeners, show_advertised_listeners}},
    {"cluster.listeners", address_key([](auto& c) -> auto& { return c.cluster_listen; })},
    {"metrics.listeners", address_key([](auto& c) -> auto& { return c.metrics_listen; })},
    {"controller.quorum.voters", text_key([](auto& c) -> auto& { return c.controller_quorum; },
                                          "a string \"ID@HOST:PORT,...\"")},
    {"process.roles", {set_process_roles, show_process_roles}},
    {"broker.heartbeat.interval.ms",
     int_key([](auto& c) -> auto& { return c.broker_heartbeat_interval_ms; }, 1, int32_max)},
    {"broker.session.timeout.ms",
     int_key([](auto& c) -> auto& { return c.broker_session_timeout_ms; }, 1, int32_max)},
    {"controller.quorum.election.timeout.ms",
     int_key([](auto& c) -> auto& { return c.controller_quorum_election_timeout_ms; }, 1,
             int32_max)},
    {"auto.leader.rebalance.enable",
     bool_key([](auto& c) -> auto& { return c.auto_leader_rebalance_enable; })},
    {"leader.imbalance.check.interval.seconds",
     int_key([](auto& c) -> auto& { return c.leader_imbalance_check_interval_seconds; }, 1,
             int32_max)},
    {"leader.imbalance.per.broker.percentage",
     int_key([](auto& c) -> auto& { return c.leader_imbalance_per_broker_percentage; }, 0,
             100)},
    {"fault.injection.enable",
     bool_key([](auto& c) -> auto& { return c.fault_injection_enable; })},
    {"cluster.id", text_key([](auto& c) -> auto& { return c.cluster_id; }, "a string")},
    {min_insync_replicas_key,
     int_key([](auto& c) -> auto& { return c.min_insync_replicas; }, 1, int32_max)},
    {"num.partitions",
     int_key([](auto& c) -> auto& { return c.default_partitions; }, 1, max_topic_partitions)},
    {"default.replication.factor", int_key([](auto& c) -> auto& { return c.default_replication_factor; },
                                           1, std::numeric_limits<int16_t>::max())},
    {"offsets.topic.num.partitions",
     int_key([](auto& c) -> auto& { return c.offsets_topic_partitions; }, 1, max_topic_partitions)},
    {"offsets.topic.replication.factor",
     int_key([](auto& c) -> auto& { return c.offsets_topic_replication_factor; }, 1,
             std::numeric_limits<int16_t>::max())},
    {"group.min.session.timeout.ms",
     int_key([](auto& c) -> auto& { return c.group_membership_limits.min_session_timeout_ms; }, 1,
             int32_max)},
    {"group.max.session.timeout.ms",
     int_key([](auto& c) -> auto& { return c.group_membership_limits.max_session_timeout_ms; }, 1,
             int32_max)},
    {"group.initial.rebalance.delay.ms",
     int_key([](auto& c) -> auto& { return c.group_membership_limits.initial_rebalance_delay_ms; }, 0,
             int32_max)},
    {"group.max.size",
     int_key([](auto& c) -> auto& { return c.group_membership_limits.max_size; }, 1, int32_max)},
    {"offsets.retention.minutes",
     int_key([](auto& c) -> auto& { return c.offsets_retention_minutes; }, 1, int32_max)},
    {"offsets.retention.check.interval.ms",
     int_key([](auto& c) -> auto& { return c.offsets_retention_check_interval_ms; }, 1, int32_max)},
    {"num.io.threads", int_key([](auto& c) -> auto& { return c.scheduler_threads; }, 1, 256)},
    {"actor.scheduler.policy", {set_scheduler_policy, show_scheduler_policy}},
    {"num.log.io.workers", int_key([](auto& c) -> auto& { return c.io_workers; }, 1, 256)},
    {max_broker_partitions_key,
     int_key([](auto& c) -> auto& { return c.max_broker_partitions; }, 1, int32_max)},
    {"log.flush.offset.checkpoint.interval.ms",
     int_key([](auto& c) -> auto& { return c.checkpoint_interval_ms; }, 1, int32_max)},
    {"max.connections",
     int_key([](auto& c) -> auto& { return c.client_limits.max_connections; }, 1, int32_max)},
    {"max.connections.per.ip",
     int_key([](auto& c) -> auto& { return c.client_limits.max_connections_per_ip; }, 1, int32_max)},
    {"socket.request.max.bytes",
     int_key([](auto& c) -> auto& { return c.client_limits.socket_request_max_bytes; },
             min_socket_request_max_bytes, int32_max)},
    {"queued.max.request.bytes.per.connection",
     int_key([](auto& c) -> auto& { return c.client_limits.queued_max_request_bytes_per_connection; }, 1,
             int32_max)},
    {"queued.max.response.bytes.per.connection",
     int_key([](auto& c) -> auto& { return c.client_limits.queued_max_response_bytes_per_connection; },
             1, int32_max)},
    {"queued.max.responses.per.connection",
     int_key([](auto& c) -> auto& { return c.client_limits.queued_max_responses_per_connection; }, 1,
             int32_max)},
    {"queued.max.requests",
     int_key([](auto& c) -> auto& { return c.client_limits.queued_max_requests; }, 1, int32_max)},
    {"fetch.max.parked.per.connection",
     int_key([](auto& c) -> auto& { return c.client_limits.fetch_max_parked_per_connection; }, 0,
             int32_max)},
    {"fetch.max.parked.per.node",
     int_key([](auto& c) -> auto& { return c.client_limits.fetch_max_parked_per_node; }, 0, int32_max)},
    // Kafka's lower bounds where it has them (atLeast(0)); where Kafka takes any int, the
    // smallest value that means something here.
    {"replica.lag.time.max.ms", int_key([](auto& c) -> auto& { return c.replica_lag_time_max_ms; }, 1,
                                        std::numeric_limits<int64_t>::max())},
    {"num.replica.fetchers", int_key([](auto& c) -> auto& { return c.num_replica_fetchers; }, 1, int32_max)},
    {"replica.fetch.max.bytes",
     int_key([](auto& c) -> auto& { return c.replica_fetcher.partition_max_bytes; }, 0, int32_max)},
    {"replica.fetch.min.bytes",
     int_key([](auto& c) -> auto& { return c.replica_fetcher.min_bytes; }, 0, int32_max)},
    {"replica.fetch.wait.max.ms",
     int_key([](auto& c) -> auto& { return c.replica_fetcher.max_wait_ms; }, 0, int32_max)},
    {"replica.fetch.response.max.bytes",
     int_key([](auto& c) -> auto& { return c.replica_fetcher.response_max_bytes; }, 0, int32_max)},
    {"replica.fetch.backoff.ms",
     int_key([](auto& c) -> auto& { return c.replica_fetcher.backoff_ms; }, 0, int32_max)},
    {"replica.socket.timeout.ms",
     int_key([](auto& c) -> auto& { return c.replica_fetcher.request_timeout_ms; }, 1, int32_max)},
  };
  return keys;
}

status apply_key(node_config& c, const std::string& key, const flat_value& flat) {
  if (auto it = node_keys().find(key); it != node_keys().end()) return it->second.set(c, key, flat);
  if (auto it = log_default_keys().find(key); it != log_default_keys().end()) {
    if (auto s = check_log_default_kind(key, it->second, flat); !s) return s;
    return apply_log_default(c, key, it->second, flat.text);
  }
  if (auto it = log_scaled_keys().find(key); it != log_scaled_keys().end()) {
    if (auto s = check_kind(key, flat, {value_kind::integer}, "an integer"); !s) return s;
    auto v = parse_int(key, flat.text, 1, std::numeric_limits<int64_t>::max() / it->second.second);
    if (!v) return v.err();
    return apply_log_default(c, key, it->second.first, std::to_string(*v * it->second.second));
  }
  return make_error(errc::invalid_config, "unknown config '" + key + "'");
}

// Kafka's synonyms among node_keys: two names of one setting, the first the one it goes by.
constexpr std::pair<const char*, const char*> aliases[] = {{"node.id", "broker.id"}, {"log.dirs", "log.dir"}};

// Two names of one setting (Kafka's synonyms) given different values: refused rather than one
// silently winning.
status check_aliases(const std::map<std::string, flat_value>& flat) {
  for (const auto& [a, b] : aliases) {
    auto x = flat.find(a);
    auto y = flat.find(b);
    if (x == flat.end() || y == flat.end() || (x->second.text == y->second.text && x->second.kind == y->second.kind))
      continue;
    return make_error(errc::invalid_config, std::string(a) + " = " + x->second.text + " and " + b + " = " +
                                              y->second.text + " name one setting; give one of them");
  }
  return {};
}

// Kafka's checks across keys (KafkaConfig.validateValues): a follower's fetch may wait no longer
// than its request may take, nor than its leader lets it lag before it leaves the ISR.
status check_replication(const node_config& c) {
  const auto wait = c.replica_fetcher.max_wait_ms;
  auto over = [&](const char* other, int64_t limit, const char* why) {
    return make_error(errc::invalid_config, "replica.fetch.wait.max.ms (" + std::to_string(wait) +
                                              ") must be at most " + other + " (" + std::to_string(limit) +
                                              ") " + why);
  };
  if (wait > c.replica_fetcher.request_timeout_ms)
    return over("replica.socket.timeout.ms", c.replica_fetcher.request_timeout_ms,
                "to prevent unnecessary socket timeouts");
  if (wait > c.replica_lag_time_max_ms)
    return over("replica.lag.time.max.ms", c.replica_lag_time_max_ms, "to prevent frequent changes in the ISR");
  return {};
}

// A node heartbeats more often than its session runs out (Kafka's check in
// KafkaConfig.validateValues), so that one late heartbeat does not fence it.
status check_heartbeats(const node_config& c) {
  if (c.broker_heartbeat_interval_ms < c.broker_session_timeout_ms) return {};
  return make_error(errc::invalid_config,
                    "broker.heartbeat.interval.ms (" + std::to_string(c.broker_heartbeat_interval_ms) +
                      ") must be less than broker.session.timeout.ms (" +
                      std::to_string(c.broker_session_timeout_ms) + ")");
}

// A group member's session timeout must fit between the two bounds, so they must leave room.
status check_group_sessions(const node_config& c) {
  const auto& g = c.group_membership_limits;
  if (g.min_session_timeout_ms <= g.max_session_timeout_ms) return {};
  return make_error(errc::invalid_config,
                    "group.min.session.timeout.ms (" + std::to_string(g.min_session_timeout_ms) +
                      ") must be at most group.max.session.timeout.ms (" +
                      std::to_string(g.max_session_timeout_ms) + ")");
}

// Applies a parsed file; `source` prefixes error messages.
result<node_config> apply_table(const toml::table& root, const std::string& source,
                                node_config base) {
  std::map<std::string, flat_value> flat;
  if (auto s = flatten(root, "", flat); !s)
    return make_error(errc::invalid_config, source + ": " + s.err().message);
  if (auto s = check_aliases(flat); !s) return make_error(errc::invalid_config, source + ": " + s.err().message);
  // log.roll.ms and log.retention.ms win over their coarser forms, as in Kafka: apply the coarse
  // ones first.
  std::vector<std::pair<std::string, flat_value>> ordered;
  for (const auto& kv : flat)
    if (log_scaled_keys().count(kv.first) != 0) ordered.push_back(kv);
  for (const auto& kv : flat)
    if (log_scaled_keys().count(kv.first) == 0) ordered.push_back(kv);
  node_config c = std::move(base);
  for (const auto& [key, value] : ordered) {
    if (auto s = apply_key(c, key, value); !s)
      return make_error(errc::invalid_config, source + ": " + s.err().message);
    c.given_keys.insert(key);
  }
  if (auto s = check_replication(c); !s) return make_error(errc::invalid_config, source + ": " + s.err().message);
  if (auto s = check_heartbeats(c); !s) return make_error(errc::invalid_config, source + ": " + s.err().message);
  if (auto s = check_group_sessions(c); !s) return make_error(errc::invalid_config, source + ": " + s.err().message);
  if (!c.controller_quorum.empty())
    if (auto voters = parse_controller_quorum(c.controller_quorum); !voters)
      return make_error(errc::invalid_config, source + ": controller.quorum.voters: " + voters.err().message);
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

std::set<std::string> node_config::known_keys() {
  std::set<std::string> out;
  for (const auto& [key, setter] : node_keys()) out.insert(key);
  for (const auto& [key, topic_key] : log_default_keys()) out.insert(key);
  for (const auto& [key, scaled] : log_scaled_keys()) out.insert(key);
  return out;
}

namespace node_config_keys {

const std::map<std::string, std::string>& log_defaults() { return log_default_keys(); }

const std::map<std::string, std::pair<std::string, int64_t>>& log_scaled() {
  return log_scaled_keys();
}

std::vector<std::pair<std::string, std::string>> synonyms() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, synonym] : aliases) out.emplace_back(name, synonym);
  return out;
}

std::map<std::string, std::optional<std::string>> shown(const node_config& c) {
  std::map<std::string, std::optional<std::string>> out;
  for (const auto& [key, k] : node_keys()) out.emplace(key, k.show(c));
  return out;
}

} // namespace node_config_keys

} // namespace capstan
