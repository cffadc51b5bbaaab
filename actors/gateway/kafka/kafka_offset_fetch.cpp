#include "actors/gateway/kafka/kafka_offset_fetch.hpp"

#include "actors/gateway/kafka/kafka_error_code.hpp"
#include "actors/gateway/kafka/kafka_response_support.hpp"
#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/message_codec.hpp"

namespace capstan {

kafka_offset_fetch_call offset_fetch_call(const kafka::struct_value& body) {
  kafka_offset_fetch_call out;
  out.group = body["GroupId"].as_string();
  const auto& topics = body["Topics"];
  if (topics.is_null()) return out;
  for (const auto& t : topics.as_array()) {
    const auto& name = t.as_struct()["Name"].as_string();
    for (const auto& p : t.as_struct()["PartitionIndexes"].as_array()) {
      group_offset e;
      e.topic = name;
      e.partition = static_cast<int32_t>(p.as_int());
      out.entries.push_back(std::move(e));
    }
  }
  return out;
}

kafka::struct_value offset_fetch_response_body(const answer<group_offsets>& a,
                                               const kafka_offset_fetch_call& asked,
                                               kafka::api_version version) {
  using kafka::value;
  auto body = kafka::make_message(kafka::offset_fetch_api, kafka::message_kind::response);
  body["ThrottleTimeMs"] = value(int64_t{0});
  body["ErrorCode"] = value(int64_t{version >= 2 ? kafka_error_code(a.err.code) : 0});
  group_offsets entries = a.ok() ? a.value : asked.entries;
  if (!a.ok())
    for (auto& e : entries) e.error = a.err.code;
  value::array_type topics;
  for (const auto& e : entries) {
    if (topics.empty() || topics.back().as_struct()["Name"].as_string() != e.topic) {
      auto t = element_of(body, "Topics");
      t["Name"] = value(e.topic);
      t["Partitions"] = value(value::array_type{});
      topics.emplace_back(std::move(t));
    }
    auto& t = topics.back().as_struct();
    auto p = element_of(t, "Partitions");
    p["PartitionIndex"] = value(int64_t{e.partition});
    p["CommittedOffset"] = value(int64_t{a.ok() ? e.offset : -1});
    p["CommittedLeaderEpoch"] = value(int64_t{a.ok() ? e.leader_epoch : -1});
    p["Metadata"] = value(e.metadata);
    p["ErrorCode"] = value(int64_t{kafka_error_code(e.error)});
    t["Partitions"].as_array().emplace_back(std::move(p));
  }
  body["Topics"] = value(std::move(topics));
  return body;
}

kj::Promise<bytes> serve_kafka_offset_fetch(const client_session& s, kafka::request req) {
  auto call = offset_fetch_call(req.body);
  auto asked = call;
  return handle_fetch_offsets(s, std::move(call.group), std::move(call.entries))
      .then([req = std::move(req), asked = std::move(asked)](answer<group_offsets>&& a) {
        return response_frame(kafka::offset_fetch_api, req,
                              offset_fetch_response_body(a, asked, req.header.version));
      });
}

} // namespace capstan
