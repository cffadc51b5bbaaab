#include "actors/gateway/kafka/kafka_offset_commit.hpp"

#include <map>
#include <utility>

#include "actors/gateway/kafka/kafka_error_code.hpp"
#include "actors/gateway/kafka/kafka_response_support.hpp"
#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/message_codec.hpp"

namespace capstan {

kafka_offset_commit_call offset_commit_call(const kafka::struct_value& body) {
  kafka_offset_commit_call out;
  out.group = body["GroupId"].as_string();
  out.member.member_id = body["MemberId"].as_string();
  out.member.group_instance_id = string_or_empty(body["GroupInstanceId"]);
  out.member.generation = static_cast<int32_t>(body["GenerationIdOrMemberEpoch"].as_int());
  for (const auto& t : body["Topics"].as_array()) {
    const auto& topic = t.as_struct()["Name"].as_string();
    for (const auto& p : t.as_struct()["Partitions"].as_array()) {
      const auto& ps = p.as_struct();
      group_offset e;
      e.topic = topic;
      e.partition = static_cast<int32_t>(ps["PartitionIndex"].as_int());
      e.offset = ps["CommittedOffset"].as_int();
      e.leader_epoch = static_cast<int32_t>(ps["CommittedLeaderEpoch"].as_int());
      e.metadata = string_or_empty(ps["CommittedMetadata"]);
      out.entries.push_back(std::move(e));
    }
  }
  return out;
}

kafka::struct_value offset_commit_response_body(const answer<group_offsets>& a,
                                                const kafka::struct_value& request) {
  using kafka::value;
  std::map<std::pair<std::string, int32_t>, errc> errors;
  for (const auto& e : a.value) errors[{e.topic, e.partition}] = e.error;
  auto body = kafka::make_message(kafka::offset_commit_api, kafka::message_kind::response);
  body["ThrottleTimeMs"] = value(int64_t{0});
  value::array_type topics;
  for (const auto& t : request["Topics"].as_array()) {
    const auto& name = t.as_struct()["Name"].as_string();
    auto out_t = element_of(body, "Topics");
    out_t["Name"] = value(name);
    value::array_type parts;
    for (const auto& p : t.as_struct()["Partitions"].as_array()) {
      const auto index = static_cast<int32_t>(p.as_struct()["PartitionIndex"].as_int());
      auto out_p = element_of(out_t, "Partitions");
      out_p["PartitionIndex"] = value(int64_t{index});
      errc code = a.err.code;
      if (a.ok()) {
        auto it = errors.find({name, index});
        code = it != errors.end() ? it->second : errc::unknown_server_error;
      }
      out_p["ErrorCode"] = value(int64_t{kafka_error_code(code)});
      parts.emplace_back(std::move(out_p));
    }
    out_t["Partitions"] = value(std::move(parts));
    topics.emplace_back(std::move(out_t));
  }
  body["Topics"] = value(std::move(topics));
  return body;
}

kj::Promise<bytes> serve_kafka_offset_commit(const client_session& s, kafka::request req) {
  auto call = offset_commit_call(req.body);
  return handle_commit_offsets(s, std::move(call.group), std::move(call.member),
                               std::move(call.entries))
      .then([req = std::move(req)](answer<group_offsets>&& a) {
        return response_frame(kafka::offset_commit_api, req,
                              offset_commit_response_body(a, req.body));
      });
}

} // namespace capstan
