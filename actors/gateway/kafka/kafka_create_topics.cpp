#include "actors/gateway/kafka/kafka_create_topics.hpp"

#include <algorithm>
#include <utility>

#include "actors/gateway/handlers/create_topic_handler.hpp"
#include "actors/gateway/handlers/metadata_handler.hpp"
#include "actors/gateway/kafka/kafka_error_code.hpp"
#include "actors/gateway/kafka/kafka_response_support.hpp"
#include "runtime/cluster/topic_validation.hpp"
#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/message_codec.hpp"

namespace capstan {

namespace {

using kafka::value;

// Kafka's ConfigSource for a topic-level override (DYNAMIC_TOPIC_CONFIG).
constexpr int64_t topic_config_source = 1;

kafka::value topic_configs(const kafka::struct_value& topic_result, const topic_metadata& md) {
  value::array_type configs;
  for (const auto& [name, v] : md.configs) {
    auto c = element_of(topic_result, "Configs");
    c["Name"] = value(name);
    c["Value"] = value(v);
    c["ReadOnly"] = value(false);
    c["ConfigSource"] = value(topic_config_source);
    c["IsSensitive"] = value(false);
    configs.emplace_back(std::move(c));
  }
  return value(std::move(configs));
}

} // namespace

std::vector<kafka_create_topic_call> create_topics_calls(const kafka::struct_value& body) {
  std::vector<kafka_create_topic_call> out;
  for (const auto& t : body["Topics"].as_array()) {
    const auto& topic = t.as_struct();
    kafka_create_topic_call call;
    call.spec.name = topic["Name"].as_string();
    call.spec.partitions = static_cast<int32_t>(topic["NumPartitions"].as_int());
    call.spec.replication_factor = static_cast<int16_t>(topic["ReplicationFactor"].as_int());
    // A null value asks for the default, which is what leaving the key out gives.
    for (const auto& c : topic["Configs"].as_array())
      if (!c.as_struct()["Value"].is_null())
        call.spec.configs[c.as_struct()["Name"].as_string()] = c.as_struct()["Value"].as_string();
    if (!topic["Assignments"].as_array().empty())
      call.refused =
          make_error(errc::invalid_replica_assignment, "the controller places replicas itself");
    out.push_back(std::move(call));
  }
  return out;
}

error validate_create_topic(const topic_spec& spec, const cluster_metadata& md) {
  if (auto v = validate_topic_name(spec.name); !v) return v.err();
  if (is_internal_topic(spec.name))
    return make_error(errc::invalid_request,
                      "creation of internal topic " + spec.name + " is prohibited");
  if (md.topics.contains(spec.name))
    return make_error(errc::topic_already_exists, "topic " + spec.name + " already exists");
  auto checked = spec;
  if (checked.partitions == -1) checked.partitions = 1;
  if (checked.replication_factor == -1) checked.replication_factor = 1;
  if (auto v = validate_topic_spec(checked, std::max<size_t>(md.brokers.size(), 1)); !v)
    return v.err();
  return error{};
}

void complete_created_topics(std::vector<answer<topic_metadata>>& results,
                             const cluster_metadata& md) {
  for (auto& a : results) {
    if (!a.ok() || !a.value.partitions.empty()) continue;
    auto it = md.topics.find(a.value.name);
    // The same name with another id is a later topic: this one was deleted meanwhile.
    if (it == md.topics.end() || it->second.id != a.value.id) continue;
    a.value.partitions = it->second.partitions;
    a.value.configs = it->second.configs;
  }
}

kafka::struct_value create_topics_response_body(const std::vector<answer<topic_metadata>>& results,
                                                const kafka::request& req) {
  auto body = kafka::make_message(kafka::create_topics_api, kafka::message_kind::response);
  body["ThrottleTimeMs"] = value(int64_t{0});
  const auto& topics = req.body["Topics"].as_array();
  value::array_type out;
  for (size_t i = 0; i < topics.size(); ++i) {
    const auto& a = results[i];
    auto t = element_of(body, "Topics");
    t["Name"] = value(topics[i].as_struct()["Name"].as_string());
    t["ErrorCode"] = value(int64_t{kafka_error_code(a.err.code)});
    t["ErrorMessage"] = nullable_string(a.err.message);
    if (a.ok()) t["TopicId"] = value(kafka::uuid_bytes(a.value.id));
    if (a.ok() && !a.value.partitions.empty()) {
      t["NumPartitions"] = value(static_cast<int64_t>(a.value.partitions.size()));
      t["ReplicationFactor"] =
          value(static_cast<int64_t>(a.value.partitions.front().replicas.size()));
      t["Configs"] = topic_configs(t, a.value);
    }
    out.emplace_back(std::move(t));
  }
  body["Topics"] = value(std::move(out));
  return body;
}

kj::Promise<bytes> serve_kafka_create_topics(const client_session& s, kafka::request req) {
  auto calls = create_topics_calls(req.body);
  if (req.body["validateOnly"].as_bool()) {
    return handle_metadata(s, "metadata")
        .then([calls = std::move(calls), req = std::move(req)](answer<metadata_snapshot>&& md) {
          std::vector<answer<topic_metadata>> results;
          for (const auto& c : calls) {
            answer<topic_metadata> r;
            if (c.refused.code != errc::none)
              r.err = c.refused;
            else if (!md.ok() || !md.value)
              r.err = md.err;
            else
              r.err = validate_create_topic(c.spec, *md.value);
            results.push_back(std::move(r));
          }
          return response_frame(kafka::create_topics_api, req,
                                create_topics_response_body(results, req));
        });
  }
  kj::Vector<kj::Promise<answer<topic_metadata>>> pending;
  for (auto& c : calls) {
    if (c.refused.code != errc::none)
      pending.add(answer<topic_metadata>{topic_metadata{}, c.refused});
    else
      pending.add(handle_create_topic(s, std::move(c.spec)));
  }
  return kj::joinPromises(pending.releaseAsArray())
      .then([s, req = std::move(req)](
                kj::Array<answer<topic_metadata>>&& answers) mutable -> kj::Promise<bytes> {
        std::vector<answer<topic_metadata>> results(std::make_move_iterator(answers.begin()),
                                                    std::make_move_iterator(answers.end()));
        if (req.header.version < 5)
          return response_frame(kafka::create_topics_api, req,
                                create_topics_response_body(results, req));
        return handle_metadata(s, "metadata")
            .then([req = std::move(req),
                   results = std::move(results)](answer<metadata_snapshot>&& md) mutable {
              if (md.ok() && md.value) complete_created_topics(results, *md.value);
              return response_frame(kafka::create_topics_api, req,
                                    create_topics_response_body(results, req));
            });
      });
}

} // namespace capstan
