#include "actors/gateway/kafka/kafka_describe_groups.hpp"

#include "actors/gateway/kafka/kafka_error_code.hpp"
#include "actors/gateway/kafka/kafka_response_support.hpp"
#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/message_codec.hpp"

namespace capstan {

kafka::struct_value
describe_groups_response_body(const std::vector<std::string>& groups,
                              const std::vector<answer<group_summary>>& answers) {
  using kafka::value;
  auto body = kafka::make_message(kafka::describe_groups_api, kafka::message_kind::response);
  body["ThrottleTimeMs"] = value(int64_t{0});
  value::array_type out;
  for (size_t i = 0; i < groups.size(); ++i) {
    const auto& a = answers.at(i);
    auto g = element_of(body, "Groups");
    g["ErrorCode"] = value(int64_t{kafka_error_code(a.err.code)});
    g["GroupId"] = value(groups[i]);
    g["GroupState"] = value(a.ok() ? a.value.state : std::string{});
    g["ProtocolType"] = value(a.value.protocol_type);
    g["ProtocolData"] = value(a.value.protocol_name);
    value::array_type members;
    for (const auto& m : a.value.members) {
      auto e = element_of(g, "Members");
      e["MemberId"] = value(m.member_id);
      e["GroupInstanceId"] = nullable_string(m.group_instance_id);
      e["ClientId"] = value(m.client_id);
      e["ClientHost"] = value(std::string{});
      e["MemberMetadata"] = value(bytes{});
      e["MemberAssignment"] = value(m.assignment);
      members.emplace_back(std::move(e));
    }
    g["Members"] = value(std::move(members));
    out.emplace_back(std::move(g));
  }
  body["Groups"] = value(std::move(out));
  return body;
}

kj::Promise<bytes> serve_kafka_describe_groups(const client_session& s, kafka::request req) {
  std::vector<std::string> groups;
  for (const auto& g : req.body["Groups"].as_array()) groups.push_back(g.as_string());
  auto calls = kj::heapArrayBuilder<kj::Promise<answer<group_summary>>>(groups.size());
  for (const auto& g : groups) calls.add(handle_describe_group(s, g));
  return kj::joinPromises(calls.finish())
      .then([req = std::move(req),
             groups = std::move(groups)](kj::Array<answer<group_summary>> done) {
        std::vector<answer<group_summary>> answers;
        for (auto& a : done) answers.push_back(kj::mv(a));
        return response_frame(kafka::describe_groups_api, req,
                              describe_groups_response_body(groups, answers));
      });
}

} // namespace capstan
