#include "actors/gateway/kafka/kafka_list_groups.hpp"

#include "actors/gateway/kafka/kafka_error_code.hpp"
#include "actors/gateway/kafka/kafka_response_support.hpp"
#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/message_codec.hpp"

namespace capstan {

kafka::struct_value list_groups_response_body(const answer<std::vector<std::string>>& a) {
  using kafka::value;
  auto body = kafka::make_message(kafka::list_groups_api, kafka::message_kind::response);
  body["ThrottleTimeMs"] = value(int64_t{0});
  body["ErrorCode"] = value(int64_t{kafka_error_code(a.err.code)});
  value::array_type groups;
  for (const auto& name : a.value) {
    auto g = element_of(body, "Groups");
    g["GroupId"] = value(name);
    g["ProtocolType"] = value(std::string{});
    groups.emplace_back(std::move(g));
  }
  body["Groups"] = value(std::move(groups));
  return body;
}

kj::Promise<bytes> serve_kafka_list_groups(const client_session& s, kafka::request req) {
  return handle_list_groups(s).then([req = std::move(req)](answer<std::vector<std::string>>&& a) {
    return response_frame(kafka::list_groups_api, req, list_groups_response_body(a));
  });
}

} // namespace capstan
