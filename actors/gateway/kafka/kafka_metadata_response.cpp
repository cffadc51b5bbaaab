#include "actors/gateway/kafka/kafka_metadata_response.hpp"

#include <string_view>

#include "actors/gateway/handlers/metadata_handler.hpp"
#include "actors/gateway/kafka/kafka_error_code.hpp"
#include "actors/gateway/kafka/kafka_response_frame.hpp"
#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/message_codec.hpp"

namespace capstan {

namespace {

using kafka::struct_value;
using kafka::value;

// Kafka's LEADER_NOT_AVAILABLE: capstan's errc has no such name, a replica answers
// NOT_LEADER_OR_FOLLOWER instead.
constexpr int16_t leader_not_available = 5;

value int_list(const std::vector<int32_t>& ids) {
  value::array_type out;
  out.reserve(ids.size());
  for (auto id : ids) out.emplace_back(int64_t{id});
  return value(std::move(out));
}

struct_value topic_entry(const struct_value& body, const topic_metadata& t,
                         const std::vector<broker_info>& brokers) {
  auto out = element_of(body, "Topics");
  out["ErrorCode"] = value(int64_t{0});
  out["Name"] = value(t.name);
  out["IsInternal"] = value(t.internal);
  value::array_type parts;
  for (const auto& p : t.partitions) {
    auto e = element_of(out, "Partitions");
    const bool led = p.leader >= 0 && broker_live(brokers, p.leader);
    e["ErrorCode"] = value(int64_t{led ? 0 : leader_not_available});
    e["PartitionIndex"] = value(int64_t{p.partition});
    e["LeaderId"] = value(int64_t{led ? p.leader : -1});
    e["LeaderEpoch"] = value(int64_t{p.leader_epoch});
    e["ReplicaNodes"] = int_list(p.replicas);
    e["IsrNodes"] = int_list(p.isr);
    std::vector<int32_t> offline;
    for (auto r : p.replicas)
      if (!broker_live(brokers, r)) offline.push_back(r);
    e["OfflineReplicas"] = int_list(offline);
    parts.emplace_back(std::move(e));
  }
  out["Partitions"] = value(std::move(parts));
  return out;
}

struct_value missing_topic_entry(const struct_value& body, const std::string& name) {
  auto out = element_of(body, "Topics");
  out["ErrorCode"] = value(int64_t{kafka_error_code(missing_topic_error(name).code)});
  out["Name"] = value(name);
  out["Partitions"] = value(value::array_type{});
  return out;
}

} // namespace

struct_value metadata_response(const struct_value& request, kafka::api_version version,
                               const cluster_metadata& md) {
  auto body = kafka::make_message(kafka::metadata_api, kafka::message_kind::response);
  value::array_type brokers;
  int32_t controller = -1;
  int32_t lowest = -1;
  for (const auto& b : md.brokers) {
    if (b.kafka_port == 0) continue;
    auto e = element_of(body, "Brokers");
    e["NodeId"] = value(int64_t{b.node_id});
    e["Host"] = value(b.kafka_host);
    e["Port"] = value(int64_t{b.kafka_port});
    brokers.emplace_back(std::move(e));
    if (b.node_id == md.controller_id) controller = b.node_id;
    if (lowest < 0 || b.node_id < lowest) lowest = b.node_id;
  }
  body["Brokers"] = value(std::move(brokers));
  body["ClusterId"] = value(md.cluster_id);
  body["ControllerId"] = value(int64_t{controller >= 0 ? controller : lowest});
  const auto& wanted = request["Topics"];
  value::array_type topics;
  if (wanted.is_null() || (version == 0 && wanted.as_array().empty())) {
    for (const auto& [name, t] : md.topics) topics.emplace_back(topic_entry(body, t, md.brokers));
  } else {
    for (const auto& w : wanted.as_array()) {
      const auto& name = w.as_struct()["Name"].as_string();
      auto it = md.topics.find(name);
      topics.emplace_back(it != md.topics.end() ? topic_entry(body, it->second, md.brokers)
                                                : missing_topic_entry(body, name));
    }
  }
  body["Topics"] = value(std::move(topics));
  return body;
}

} // namespace capstan
