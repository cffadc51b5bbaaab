#include "actors/gateway/kafka/kafka_create_partitions.hpp"

#include <utility>

#include "actors/gateway/handlers/create_partitions_handler.hpp"
#include "actors/gateway/handlers/metadata_handler.hpp"
#include "actors/gateway/kafka/kafka_error_code.hpp"
#include "actors/gateway/kafka/kafka_response_support.hpp"
#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/message_codec.hpp"

namespace capstan {

using kafka::value;

namespace {

bool has_assignments(const kafka::struct_value& topic) {
  const auto& a = topic["Assignments"];
  return !a.is_null() && !a.as_array().empty();
}

} // namespace

error validate_create_partitions(const std::string& topic, int32_t count,
                                 const cluster_metadata& md) {
  auto it = md.topics.find(topic);
  if (it == md.topics.end())
    return make_error(errc::unknown_topic_or_partition, "topic '" + topic + "' does not exist");
  const auto now = it->second.partitions.size();
  if (count <= 0 || static_cast<size_t>(count) <= now)
    return make_error(errc::invalid_partitions, "topic '" + topic + "' has " + std::to_string(now) +
                                                    " partitions, asked " + std::to_string(count));
  return error{};
}

kafka::struct_value create_partitions_response_body(const std::vector<answer<bool>>& results,
                                                    const kafka::request& req) {
  auto body = kafka::make_message(kafka::create_partitions_api, kafka::message_kind::response);
  body["ThrottleTimeMs"] = value(int64_t{0});
  const auto& topics = req.body["Topics"].as_array();
  value::array_type out;
  for (size_t i = 0; i < topics.size(); ++i) {
    auto r = element_of(body, "Results");
    r["Name"] = value(topics[i].as_struct()["Name"].as_string());
    r["ErrorCode"] = value(int64_t{kafka_error_code(results[i].err.code)});
    r["ErrorMessage"] = nullable_string(results[i].err.message);
    out.emplace_back(std::move(r));
  }
  body["Results"] = value(std::move(out));
  return body;
}

kj::Promise<bytes> serve_kafka_create_partitions(const client_session& s, kafka::request req) {
  const auto assignments_refused =
      make_error(errc::invalid_replica_assignment, "the controller places replicas itself");
  if (req.body["ValidateOnly"].as_bool()) {
    return handle_metadata(s, "metadata")
        .then([req = std::move(req), assignments_refused](answer<metadata_snapshot>&& md) {
          std::vector<answer<bool>> results;
          for (const auto& t : req.body["Topics"].as_array()) {
            const auto& topic = t.as_struct();
            answer<bool> r;
            if (has_assignments(topic))
              r.err = assignments_refused;
            else if (!md.ok() || !md.value)
              r.err = md.err;
            else
              r.err = validate_create_partitions(topic["Name"].as_string(),
                                                 static_cast<int32_t>(topic["Count"].as_int()),
                                                 *md.value);
            r.value = r.ok();
            results.push_back(std::move(r));
          }
          return response_frame(kafka::create_partitions_api, req,
                                create_partitions_response_body(results, req));
        });
  }
  kj::Vector<kj::Promise<answer<bool>>> pending;
  for (const auto& t : req.body["Topics"].as_array()) {
    const auto& topic = t.as_struct();
    if (has_assignments(topic))
      pending.add(answer<bool>{false, assignments_refused});
    else
      pending.add(handle_create_partitions(s, topic["Name"].as_string(),
                                           static_cast<int32_t>(topic["Count"].as_int())));
  }
  return kj::joinPromises(pending.releaseAsArray())
      .then([req = std::move(req)](kj::Array<answer<bool>>&& answers) {
        std::vector<answer<bool>> results(std::make_move_iterator(answers.begin()),
                                          std::make_move_iterator(answers.end()));
        return response_frame(kafka::create_partitions_api, req,
                              create_partitions_response_body(results, req));
      });
}

} // namespace capstan
