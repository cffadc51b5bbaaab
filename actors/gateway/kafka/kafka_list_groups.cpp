#include "actors/gateway/kafka/kafka_list_groups.hpp"

#include <algorithm>
#include <cctype>

#include "actors/gateway/kafka/kafka_error_code.hpp"
#include "actors/gateway/kafka/kafka_response_support.hpp"
#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/message_codec.hpp"

namespace capstan {

namespace {

bool same_state(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

bool wanted(const std::vector<std::string>& states, const std::string& state) {
  if (states.empty()) return true;
  return std::any_of(states.begin(), states.end(),
                     [&](const std::string& s) { return same_state(s, state); });
}

} // namespace

kafka::struct_value list_groups_response_body(const answer<std::vector<std::string>>& listed,
                                              const std::vector<answer<group_summary>>& described,
                                              const std::vector<std::string>& states) {
  using kafka::value;
  auto body = kafka::make_message(kafka::list_groups_api, kafka::message_kind::response);
  body["ThrottleTimeMs"] = value(int64_t{0});
  body["ErrorCode"] = value(int64_t{kafka_error_code(listed.err.code)});
  value::array_type groups;
  for (size_t i = 0; i < listed.value.size(); ++i) {
    const auto& d = described.at(i);
    const std::string state = d.ok() ? d.value.state : std::string{};
    if (!wanted(states, state)) continue;
    auto g = element_of(body, "Groups");
    g["GroupId"] = value(listed.value[i]);
    g["ProtocolType"] = value(d.ok() ? d.value.protocol_type : std::string{});
    g["GroupState"] = value(state);
    groups.emplace_back(std::move(g));
  }
  body["Groups"] = value(std::move(groups));
  return body;
}

kj::Promise<bytes> serve_kafka_list_groups(const client_session& s, kafka::request req) {
  std::vector<std::string> states;
  for (const auto& v : req.body["StatesFilter"].as_array()) states.push_back(v.as_string());
  return handle_list_groups(s).then([s, req = std::move(req), states = std::move(states)](
                                        answer<std::vector<std::string>>&& listed) mutable {
    auto calls = kj::heapArrayBuilder<kj::Promise<answer<group_summary>>>(listed.value.size());
    for (const auto& g : listed.value) calls.add(handle_describe_group(s, g));
    return kj::joinPromises(calls.finish())
        .then([req = std::move(req), states = std::move(states),
               listed = std::move(listed)](kj::Array<answer<group_summary>> done) {
          std::vector<answer<group_summary>> described;
          for (auto& d : done) described.push_back(kj::mv(d));
          return response_frame(kafka::list_groups_api, req,
                                list_groups_response_body(listed, described, states));
        });
  });
}

} // namespace capstan
