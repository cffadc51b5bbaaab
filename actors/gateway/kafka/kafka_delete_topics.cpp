#include "actors/gateway/kafka/kafka_delete_topics.hpp"

#include <utility>

#include "actors/gateway/handlers/delete_topic_handler.hpp"
#include "actors/gateway/kafka/kafka_error_code.hpp"
#include "actors/gateway/kafka/kafka_response_support.hpp"
#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/message_codec.hpp"

namespace capstan {

using kafka::value;

std::vector<std::string> delete_topics_names(const kafka::request& req) {
  std::vector<std::string> names;
  if (req.header.version >= 6) {
    for (const auto& t : req.body["Topics"].as_array())
      names.push_back(string_or_empty(t.as_struct()["Name"]));
  } else {
    for (const auto& n : req.body["TopicNames"].as_array()) names.push_back(n.as_string());
  }
  return names;
}

kafka::struct_value delete_topics_response_body(const std::vector<answer<bool>>& results,
                                                const kafka::request& req) {
  const auto names = delete_topics_names(req);
  auto body = kafka::make_message(kafka::delete_topics_api, kafka::message_kind::response);
  body["ThrottleTimeMs"] = value(int64_t{0});
  value::array_type out;
  for (size_t i = 0; i < names.size(); ++i) {
    auto r = element_of(body, "Responses");
    r["Name"] = value(names[i]);
    if (req.header.version >= 6) {
      r["TopicId"] = req.body["Topics"].as_array()[i].as_struct()["TopicId"];
      if (names[i].empty()) r["Name"] = value(kafka::null_value{});
    }
    r["ErrorCode"] = value(int64_t{kafka_error_code(results[i].err.code)});
    r["ErrorMessage"] = nullable_string(results[i].err.message);
    out.emplace_back(std::move(r));
  }
  body["Responses"] = value(std::move(out));
  return body;
}

kj::Promise<bytes> serve_kafka_delete_topics(const client_session& s, kafka::request req) {
  kj::Vector<kj::Promise<answer<bool>>> pending;
  for (auto& name : delete_topics_names(req)) {
    if (name.empty())
      pending.add(
          answer<bool>{false, make_error(errc::invalid_request, "topics are deleted by name")});
    else
      pending.add(handle_delete_topic(s, std::move(name)));
  }
  return kj::joinPromises(pending.releaseAsArray())
      .then([req = std::move(req)](kj::Array<answer<bool>>&& answers) {
        std::vector<answer<bool>> results(std::make_move_iterator(answers.begin()),
                                          std::make_move_iterator(answers.end()));
        return response_frame(kafka::delete_topics_api, req,
                              delete_topics_response_body(results, req));
      });
}

} // namespace capstan
