#include "actors/gateway/kafka/kafka_offsets_for_leader_epoch.hpp"

#include <utility>

#include "actors/gateway/handlers/offsets_for_leader_epoch_handler.hpp"
#include "actors/gateway/kafka/kafka_error_code.hpp"
#include "actors/gateway/kafka/kafka_response_frame.hpp"
#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/message_codec.hpp"

namespace capstan {

using kafka::value;

kafka::struct_value
offsets_for_leader_epoch_response_body(const std::vector<kafka_epoch_answer>& answers,
                                       const kafka::request& req) {
  auto out = kafka::make_message(kafka::offset_for_leader_epoch_api, kafka::message_kind::response);
  out["ThrottleTimeMs"] = value(int64_t{0});
  const auto& topics = req.body["Topics"].as_array();
  value::array_type responses;
  for (size_t t = 0; t < topics.size(); ++t) {
    auto topic = element_of(out, "Topics");
    topic["Topic"] = value(topics[t].as_struct()["Topic"].as_string());
    value::array_type parts;
    for (const auto& a : answers) {
      if (a.topic != t) continue;
      auto part = element_of(topic, "Partitions");
      part["Partition"] = value(int64_t{a.partition});
      part["ErrorCode"] = value(int64_t{kafka_error_code(a.result.err.code)});
      if (a.result.ok()) {
        part["LeaderEpoch"] = value(int64_t{a.result.value.epoch.value()});
        part["EndOffset"] = value(a.result.value.end.value());
      }
      parts.emplace_back(std::move(part));
    }
    topic["Partitions"] = value(std::move(parts));
    responses.emplace_back(std::move(topic));
  }
  out["Topics"] = value(std::move(responses));
  return out;
}

kj::Promise<bytes> serve_kafka_offsets_for_leader_epoch(const client_session& s,
                                                        kafka::request req) {
  const auto& topics = req.body["Topics"].as_array();
  kj::Vector<kj::Promise<kafka_epoch_answer>> calls;
  for (size_t t = 0; t < topics.size(); ++t) {
    const auto& topic = topics[t].as_struct();
    for (const auto& p : topic["Partitions"].as_array()) {
      const auto& part = p.as_struct();
      const auto partition = static_cast<int32_t>(part["Partition"].as_int());
      calls.add(handle_offsets_for_leader_epoch(
                    s, topic["Topic"].as_string(), partition,
                    leader_epoch{static_cast<int32_t>(part["CurrentLeaderEpoch"].as_int())},
                    leader_epoch{static_cast<int32_t>(part["LeaderEpoch"].as_int())})
                    .then([t, partition](answer<epoch_end>&& a) {
                      return kafka_epoch_answer{t, partition, std::move(a)};
                    }));
    }
  }
  return kj::joinPromises(calls.releaseAsArray())
      .then([req = std::move(req)](kj::Array<kafka_epoch_answer>&& answers) {
        std::vector<kafka_epoch_answer> all(std::make_move_iterator(answers.begin()),
                                            std::make_move_iterator(answers.end()));
        return response_frame(kafka::offset_for_leader_epoch_api, req,
                              offsets_for_leader_epoch_response_body(all, req));
      });
}

} // namespace capstan
