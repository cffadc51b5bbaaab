#include "actors/gateway/kafka/kafka_describe_configs.hpp"

#include <algorithm>
#include <charconv>
#include <string_view>
#include <utility>

#include "actors/gateway/handlers/describe_configs_handler.hpp"
#include "actors/gateway/handlers/metadata_handler.hpp"
#include "actors/gateway/kafka/kafka_error_code.hpp"
#include "actors/gateway/kafka/kafka_response_support.hpp"
#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/message_codec.hpp"

namespace capstan {

using kafka::value;

namespace {

// Kafka's ConfigSource for a topic's override; the others are broker_config_source's.
constexpr int64_t dynamic_topic_config = 1;
// Kafka's ResourceType for a broker's loggers (KIP-412).
constexpr int64_t kafka_broker_logger_resource = 8;

using config_map = std::map<std::string, std::string>;

bool wanted(const kafka::value& keys, const std::string& name) {
  if (keys.is_null()) return true;
  const auto& k = keys.as_array();
  return std::any_of(k.begin(), k.end(), [&](const value& v) { return v.as_string() == name; });
}

// A broker resource's name as Kafka reads it (Java's Integer.parseInt: an optional sign, then
// decimal digits within int32); nullopt when it is not one.
std::optional<int32_t> broker_id_of(const std::string& name) {
  std::string_view text = name;
  if (text.size() > 1 && text.front() == '+' && text[1] != '-') text.remove_prefix(1);
  int32_t id = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return id;
}

// Why a resource of `type` other than a topic or a broker is not described.
error refused_resource(int64_t type) {
  if (type == kafka_broker_logger_resource)
    return make_error(errc::invalid_request,
                      "broker loggers (resource type 8) are not described through the Kafka "
                      "listener: capstan's log levels are not broker configs");
  return make_error(errc::invalid_request,
                    "resource type " + std::to_string(type) +
                        " is not described through the Kafka listener: only topics (2) and "
                        "brokers (4) are");
}

} // namespace

kafka_config_resource topic_config_resource(answer<config_map> configs,
                                            const config_map& overrides) {
  kafka_config_resource out;
  out.err = std::move(configs.err);
  for (auto& [name, v] : configs.value) {
    const auto source = overrides.contains(name)
                            ? dynamic_topic_config
                            : static_cast<int64_t>(broker_config_source::default_config);
    out.value.push_back(kafka_config_entry{name, std::move(v), source, false});
  }
  return out;
}

kafka_config_resource broker_config_resource(const std::string& name, int32_t self,
                                             const std::vector<broker_config_entry>& configs) {
  kafka_config_resource out;
  // An empty name asks for the dynamic defaults every broker shares; capstan has no dynamic
  // broker configs, so there are none.
  if (name.empty()) return out;
  const auto id = broker_id_of(name);
  if (!id) {
    out.err = make_error(errc::invalid_request,
                         "a broker resource's name is its broker id, an integer, not '" + name +
                             "'");
    return out;
  }
  if (*id != self) {
    // Kafka's broker describes its own configs only: the client sends the request to the broker
    // it names.
    out.err = make_error(errc::invalid_request,
                         "this is broker " + std::to_string(self) +
                             ": it describes its own configs (broker resource '" +
                             std::to_string(self) + "' or ''), not broker " + name + "'s");
    return out;
  }
  for (const auto& c : configs)
    out.value.push_back(
        kafka_config_entry{c.name, c.value, static_cast<int64_t>(c.source), true});
  return out;
}

kafka::struct_value
describe_configs_response_body(const std::vector<kafka_config_resource>& results,
                               const kafka::request& req) {
  auto body = kafka::make_message(kafka::describe_configs_api, kafka::message_kind::response);
  body["ThrottleTimeMs"] = value(int64_t{0});
  const auto& resources = req.body["Resources"].as_array();
  value::array_type out;
  for (size_t i = 0; i < resources.size(); ++i) {
    const auto& resource = resources[i].as_struct();
    const auto& a = results[i];
    auto r = element_of(body, "Results");
    r["ErrorCode"] = value(int64_t{kafka_error_code(a.err.code)});
    r["ErrorMessage"] = nullable_string(a.err.message);
    r["ResourceType"] = resource["ResourceType"];
    r["ResourceName"] = resource["ResourceName"];
    value::array_type configs;
    for (const auto& entry : a.value) {
      if (!wanted(resource["ConfigurationKeys"], entry.name)) continue;
      auto c = element_of(r, "Configs");
      c["Name"] = value(entry.name);
      c["Value"] = entry.value ? value(*entry.value) : value(kafka::null_value{});
      c["ReadOnly"] = value(entry.read_only);
      c["ConfigSource"] = value(entry.source);
      c["IsSensitive"] = value(false);
      configs.emplace_back(std::move(c));
    }
    r["Configs"] = value(std::move(configs));
    out.emplace_back(std::move(r));
  }
  body["Results"] = value(std::move(out));
  return body;
}

kj::Promise<bytes> serve_kafka_describe_configs(const client_session& s, kafka::request req) {
  return handle_metadata(s, "metadata")
      .then([s, req = std::move(req)](answer<metadata_snapshot>&& md) mutable {
        kj::Vector<kj::Promise<kafka_config_resource>> pending;
        for (const auto& r : req.body["Resources"].as_array()) {
          const auto& resource = r.as_struct();
          const auto type = resource["ResourceType"].as_int();
          const auto& name = resource["ResourceName"].as_string();
          if (type == kafka_broker_resource) {
            pending.add(broker_config_resource(name, s.ctx->targets.node,
                                               s.ctx->targets.broker_configs));
            continue;
          }
          if (type != kafka_topic_resource) {
            kafka_config_resource refused;
            refused.err = refused_resource(type);
            pending.add(std::move(refused));
            continue;
          }
          config_map overrides;
          if (md.ok() && md.value) {
            if (auto it = md.value->topics.find(name); it != md.value->topics.end())
              overrides = it->second.configs;
          }
          pending.add(handle_describe_configs(s, name).then(
              [overrides = std::move(overrides)](answer<config_map>&& a) {
                return topic_config_resource(std::move(a), overrides);
              }));
        }
        return kj::joinPromises(pending.releaseAsArray())
            .then([req = std::move(req)](kj::Array<kafka_config_resource>&& answers) {
              std::vector<kafka_config_resource> results(std::make_move_iterator(answers.begin()),
                                                         std::make_move_iterator(answers.end()));
              return response_frame(kafka::describe_configs_api, req,
                                    describe_configs_response_body(results, req));
            });
      });
}

} // namespace capstan
