#include "actors/gateway/kafka/kafka_sync_group.hpp"

#include "actors/gateway/kafka/kafka_error_code.hpp"
#include "actors/gateway/kafka/kafka_response_support.hpp"
#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/message_codec.hpp"

namespace capstan {

kafka_sync_group_call sync_group_call(const kafka::struct_value& body) {
  kafka_sync_group_call out;
  out.group = body["GroupId"].as_string();
  auto& r = out.request;
  r.member_id = body["MemberId"].as_string();
  r.group_instance_id = string_or_empty(body["GroupInstanceId"]);
  r.generation = static_cast<int32_t>(body["GenerationId"].as_int());
  for (const auto& a : body["Assignments"].as_array()) {
    member_assignment m;
    m.member_id = a.as_struct()["MemberId"].as_string();
    m.assignment = a.as_struct()["Assignment"].as_bytes();
    r.assignments.push_back(std::move(m));
  }
  return out;
}

kafka::struct_value sync_group_response_body(const answer<sync_group_response>& a,
                                             const kafka::struct_value& request) {
  auto body = kafka::make_message(kafka::sync_group_api, kafka::message_kind::response);
  body["ThrottleTimeMs"] = kafka::value(int64_t{0});
  body["ErrorCode"] = kafka::value(int64_t{kafka_error_code(a.err.code)});
  body["Assignment"] = kafka::value(a.ok() ? a.value.assignment : bytes{});
  if (a.ok()) {
    body["ProtocolType"] = request["ProtocolType"];
    body["ProtocolName"] = request["ProtocolName"];
  }
  return body;
}

kj::Promise<bytes> serve_kafka_sync_group(const client_session& s, kafka::request req) {
  auto call = sync_group_call(req.body);
  return handle_sync_group(s, std::move(call.group), std::move(call.request))
      .then([req = std::move(req)](answer<sync_group_response>&& a) {
        return response_frame(kafka::sync_group_api, req, sync_group_response_body(a, req.body));
      });
}

} // namespace capstan
