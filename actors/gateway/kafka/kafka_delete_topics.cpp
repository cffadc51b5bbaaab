#include "actors/gateway/kafka/kafka_delete_topics.hpp"

#include <utility>

#include "actors/gateway/handlers/delete_topic_handler.hpp"
#include "actors/gateway/handlers/metadata_handler.hpp"
#include "actors/gateway/kafka/kafka_error_code.hpp"
#include "actors/gateway/kafka/kafka_response_support.hpp"
#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/message_codec.hpp"

namespace capstan {

namespace {

using kafka::value;

// The topic of `md` whose id is `id`, if any.
const topic_metadata* topic_by_id(const cluster_metadata& md, const topic_id& id) {
  for (const auto& [name, t] : md.topics)
    if (t.id == id) return &t;
  return nullptr;
}

kafka_delete_topic_call resolve(const kafka::struct_value& entry, const cluster_metadata* md,
                                const error& md_err) {
  kafka_delete_topic_call call;
  call.id = std::get<kafka::uuid_bytes>(entry["TopicId"].v);
  const bool has_id = call.id != topic_id{};
  if (!entry["Name"].is_null()) call.name = entry["Name"].as_string();
  if (call.name && has_id) {
    call.refused =
        make_error(errc::invalid_request, "a topic is named by its name or by its id, not by both");
  } else if (!call.name && !has_id) {
    call.refused = make_error(errc::invalid_request, "neither a topic name nor a topic id");
  } else if (call.name) {
    if (md != nullptr)
      if (auto it = md->topics.find(*call.name); it != md->topics.end()) call.id = it->second.id;
  } else if (md == nullptr) {
    call.refused = md_err.code != errc::none
                       ? md_err
                       : make_error(errc::unknown_topic_id, "this node knows no topics yet");
  } else if (const auto* t = topic_by_id(*md, call.id); t != nullptr) {
    call.name = t->name;
  } else {
    call.refused = make_error(errc::unknown_topic_id, "no topic has this topic id");
  }
  return call;
}

kj::Promise<bytes> delete_each(const client_session& s, kafka::request req,
                               std::vector<kafka_delete_topic_call> calls) {
  kj::Vector<kj::Promise<answer<bool>>> pending;
  for (const auto& c : calls) {
    if (c.refused.code != errc::none)
      pending.add(answer<bool>{false, c.refused});
    else
      pending.add(handle_delete_topic(s, *c.name));
  }
  return kj::joinPromises(pending.releaseAsArray())
      .then([req = std::move(req), calls = std::move(calls)](kj::Array<answer<bool>>&& answers) {
        std::vector<answer<bool>> results(std::make_move_iterator(answers.begin()),
                                          std::make_move_iterator(answers.end()));
        return response_frame(kafka::delete_topics_api, req,
                              delete_topics_response_body(calls, results, req));
      });
}

} // namespace

std::vector<kafka_delete_topic_call>
delete_topics_calls(const kafka::request& req, const cluster_metadata* md, const error& md_err) {
  std::vector<kafka_delete_topic_call> calls;
  if (req.header.version >= 6) {
    for (const auto& t : req.body["Topics"].as_array())
      calls.push_back(resolve(t.as_struct(), md, md_err));
  } else {
    for (const auto& n : req.body["TopicNames"].as_array())
      calls.push_back(kafka_delete_topic_call{n.as_string(), topic_id{}, error{}});
  }
  return calls;
}

kafka::struct_value delete_topics_response_body(const std::vector<kafka_delete_topic_call>& calls,
                                                const std::vector<answer<bool>>& results,
                                                const kafka::request& req) {
  auto body = kafka::make_message(kafka::delete_topics_api, kafka::message_kind::response);
  body["ThrottleTimeMs"] = value(int64_t{0});
  value::array_type out;
  for (size_t i = 0; i < calls.size(); ++i) {
    auto r = element_of(body, "Responses");
    // Before v6 Name is not nullable; every entry there has one.
    r["Name"] = calls[i].name ? value(*calls[i].name) : value(kafka::null_value{});
    if (req.header.version >= 6) r["TopicId"] = value(kafka::uuid_bytes(calls[i].id));
    r["ErrorCode"] = value(int64_t{kafka_error_code(results[i].err.code)});
    r["ErrorMessage"] = nullable_string(results[i].err.message);
    out.emplace_back(std::move(r));
  }
  body["Responses"] = value(std::move(out));
  return body;
}

kj::Promise<bytes> serve_kafka_delete_topics(const client_session& s, kafka::request req) {
  // Before v6 every entry is a name, and no answer carries a topic id.
  if (req.header.version < 6) {
    auto calls = delete_topics_calls(req, nullptr);
    return delete_each(s, std::move(req), std::move(calls));
  }
  return handle_metadata(s, "metadata")
      .then([s, req = std::move(req)](answer<metadata_snapshot>&& md) mutable {
        const cluster_metadata* known = md.ok() && md.value ? md.value.get() : nullptr;
        auto calls = delete_topics_calls(req, known, md.err);
        return delete_each(s, std::move(req), std::move(calls));
      });
}

} // namespace capstan
