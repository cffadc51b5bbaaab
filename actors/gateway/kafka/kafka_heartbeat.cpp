#include "actors/gateway/kafka/kafka_heartbeat.hpp"

#include "actors/gateway/kafka/kafka_error_code.hpp"
#include "actors/gateway/kafka/kafka_response_support.hpp"
#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/message_codec.hpp"

namespace capstan {

group_member_ref heartbeat_member(const kafka::struct_value& body) {
  group_member_ref m;
  m.member_id = body["MemberId"].as_string();
  m.group_instance_id = string_or_empty(body["GroupInstanceId"]);
  m.generation = static_cast<int32_t>(body["GenerationId"].as_int());
  return m;
}

kj::Promise<bytes> serve_kafka_heartbeat(const client_session& s, kafka::request req) {
  auto group = req.body["GroupId"].as_string();
  return handle_heartbeat(s, std::move(group), heartbeat_member(req.body))
      .then([req = std::move(req)](answer<bool>&& a) {
        auto body = kafka::make_message(kafka::heartbeat_api, kafka::message_kind::response);
        body["ThrottleTimeMs"] = kafka::value(int64_t{0});
        body["ErrorCode"] = kafka::value(int64_t{kafka_error_code(a.err.code)});
        return response_frame(kafka::heartbeat_api, req, body);
      });
}

} // namespace capstan
