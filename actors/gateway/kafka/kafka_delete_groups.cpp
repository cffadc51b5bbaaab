#include "actors/gateway/kafka/kafka_delete_groups.hpp"

#include "actors/gateway/kafka/kafka_error_code.hpp"
#include "actors/gateway/kafka/kafka_response_support.hpp"
#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/message_codec.hpp"

namespace capstan {

kafka::struct_value delete_groups_response_body(const std::vector<std::string>& groups,
                                                const std::vector<answer<bool>>& answers) {
  using kafka::value;
  auto body = kafka::make_message(kafka::delete_groups_api, kafka::message_kind::response);
  body["ThrottleTimeMs"] = value(int64_t{0});
  value::array_type results;
  for (size_t i = 0; i < groups.size(); ++i) {
    auto r = element_of(body, "Results");
    r["GroupId"] = value(groups[i]);
    r["ErrorCode"] = value(int64_t{kafka_error_code(answers.at(i).err.code)});
    results.emplace_back(std::move(r));
  }
  body["Results"] = value(std::move(results));
  return body;
}

kj::Promise<bytes> serve_kafka_delete_groups(const client_session& s, kafka::request req) {
  std::vector<std::string> groups;
  for (const auto& g : req.body["GroupsNames"].as_array()) groups.push_back(g.as_string());
  auto calls = kj::heapArrayBuilder<kj::Promise<answer<bool>>>(groups.size());
  for (const auto& g : groups) calls.add(handle_delete_group(s, g));
  return kj::joinPromises(calls.finish())
      .then([req = std::move(req), groups = std::move(groups)](kj::Array<answer<bool>> done) {
        std::vector<answer<bool>> answers;
        for (auto& a : done) answers.push_back(kj::mv(a));
        return response_frame(kafka::delete_groups_api, req,
                              delete_groups_response_body(groups, answers));
      });
}

} // namespace capstan
