#include "actors/gateway/kafka/kafka_describe_configs.hpp"

#include <algorithm>
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

// Kafka's ConfigSource values.
constexpr int64_t dynamic_topic_config = 1;
constexpr int64_t default_config = 5;

using config_map = std::map<std::string, std::string>;

bool wanted(const kafka::value& keys, const std::string& name) {
  if (keys.is_null()) return true;
  const auto& k = keys.as_array();
  return std::any_of(k.begin(), k.end(), [&](const value& v) { return v.as_string() == name; });
}

} // namespace

kafka::struct_value
describe_configs_response_body(const std::vector<kafka_config_resource>& results,
                               const kafka::request& req) {
  auto body = kafka::make_message(kafka::describe_configs_api, kafka::message_kind::response);
  body["ThrottleTimeMs"] = value(int64_t{0});
  const auto& resources = req.body["Resources"].as_array();
  value::array_type out;
  for (size_t i = 0; i < resources.size(); ++i) {
    const auto& resource = resources[i].as_struct();
    const auto& a = results[i].configs;
    auto r = element_of(body, "Results");
    r["ErrorCode"] = value(int64_t{kafka_error_code(a.err.code)});
    r["ErrorMessage"] = nullable_string(a.err.message);
    r["ResourceType"] = resource["ResourceType"];
    r["ResourceName"] = resource["ResourceName"];
    value::array_type configs;
    for (const auto& [name, v] : a.value) {
      if (!wanted(resource["ConfigurationKeys"], name)) continue;
      auto c = element_of(r, "Configs");
      c["Name"] = value(name);
      c["Value"] = value(v);
      c["ReadOnly"] = value(false);
      c["ConfigSource"] =
          value(results[i].overrides.contains(name) ? dynamic_topic_config : default_config);
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
          if (resource["ResourceType"].as_int() != kafka_topic_resource) {
            kafka_config_resource refused;
            refused.configs.err =
                make_error(errc::invalid_request,
                           "only topic configs are described through the Kafka listener");
            pending.add(std::move(refused));
            continue;
          }
          const auto& name = resource["ResourceName"].as_string();
          config_map overrides;
          if (md.ok() && md.value) {
            if (auto it = md.value->topics.find(name); it != md.value->topics.end())
              overrides = it->second.configs;
          }
          pending.add(handle_describe_configs(s, name).then(
              [overrides = std::move(overrides)](answer<config_map>&& a) mutable {
                return kafka_config_resource{std::move(a), std::move(overrides)};
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
