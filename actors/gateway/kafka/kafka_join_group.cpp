#include "actors/gateway/kafka/kafka_join_group.hpp"

#include "actors/gateway/kafka/kafka_error_code.hpp"
#include "actors/gateway/kafka/kafka_response_support.hpp"
#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/message_codec.hpp"

namespace capstan {

namespace {

// The first version whose clients handle MEMBER_ID_REQUIRED themselves (KIP-394).
constexpr kafka::api_version member_id_required_from = 4;

} // namespace

kafka_join_group_call join_group_call(const kafka::request& req) {
  const auto& body = req.body;
  kafka_join_group_call out;
  out.group = body["GroupId"].as_string();
  auto& j = out.request;
  j.member_id = body["MemberId"].as_string();
  j.group_instance_id = string_or_empty(body["GroupInstanceId"]);
  j.client_id = req.header.client_id.value_or(std::string{});
  j.session_timeout_ms = static_cast<int32_t>(body["SessionTimeoutMs"].as_int());
  j.rebalance_timeout_ms = req.header.version == 0
                               ? j.session_timeout_ms
                               : static_cast<int32_t>(body["RebalanceTimeoutMs"].as_int());
  j.protocol_type = body["ProtocolType"].as_string();
  for (const auto& p : body["Protocols"].as_array()) {
    group_protocol proto;
    proto.name = p.as_struct()["Name"].as_string();
    proto.metadata = p.as_struct()["Metadata"].as_bytes();
    j.protocols.push_back(std::move(proto));
  }
  return out;
}

kafka::struct_value join_group_response_body(const answer<join_group_response>& a,
                                             kafka::api_version version,
                                             const std::string& protocol_type) {
  using kafka::value;
  auto body = kafka::make_message(kafka::join_group_api, kafka::message_kind::response);
  const auto& r = a.value;
  body["ThrottleTimeMs"] = value(int64_t{0});
  body["ErrorCode"] = value(int64_t{kafka_error_code(a.err.code)});
  body["MemberId"] = value(r.member_id);
  if (!a.ok()) {
    body["GenerationId"] = value(int64_t{-1});
    body["ProtocolName"] = version >= 7 ? value(kafka::null_value{}) : value(std::string{});
    body["Leader"] = value(std::string{});
    return body;
  }
  body["GenerationId"] = value(int64_t{r.generation});
  body["ProtocolType"] = value(protocol_type);
  body["ProtocolName"] = value(r.protocol_name);
  body["Leader"] = value(r.leader);
  value::array_type members;
  for (const auto& m : r.members) {
    auto e = element_of(body, "Members");
    e["MemberId"] = value(m.member_id);
    e["GroupInstanceId"] = nullable_string(m.group_instance_id);
    e["Metadata"] = value(m.metadata);
    members.emplace_back(std::move(e));
  }
  body["Members"] = value(std::move(members));
  return body;
}

kj::Promise<bytes> serve_kafka_join_group(const client_session& s, kafka::request req) {
  auto call = join_group_call(req);
  const auto version = req.header.version;
  auto retry = call;
  auto joined =
      handle_join_group(s, std::move(call.group), std::move(call.request))
          .then([s, version, retry = std::move(retry)](answer<join_group_response>&& a) mutable
                -> kj::Promise<answer<join_group_response>> {
            if (version >= member_id_required_from || a.err.code != errc::member_id_required)
              return kj::mv(a);
            retry.request.member_id = a.value.member_id;
            return handle_join_group(s, std::move(retry.group), std::move(retry.request));
          });
  return joined.then([req = std::move(req)](answer<join_group_response>&& a) {
    return response_frame(
        kafka::join_group_api, req,
        join_group_response_body(a, req.header.version, req.body["ProtocolType"].as_string()));
  });
}

} // namespace capstan
