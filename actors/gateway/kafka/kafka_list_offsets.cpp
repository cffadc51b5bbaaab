#include "actors/gateway/kafka/kafka_list_offsets.hpp"

#include "actors/gateway/handlers/list_offsets_handler.hpp"
#include "actors/gateway/kafka/kafka_error_code.hpp"
#include "actors/gateway/kafka/kafka_response_frame.hpp"
#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/message_codec.hpp"

namespace capstan {

namespace {

using kafka::value;

struct partition_answer {
  size_t topic = 0;
  int32_t partition = 0;
  answer<list_offsets_result> result;
};

} // namespace

kj::Promise<bytes> serve_list_offsets(const client_session& s, kafka::request req) {
  const auto& topics = req.body["Topics"].as_array();
  kj::Vector<kj::Promise<partition_answer>> calls;
  for (size_t t = 0; t < topics.size(); ++t) {
    const auto& topic = topics[t].as_struct();
    for (const auto& p : topic["Partitions"].as_array()) {
      const auto& part = p.as_struct();
      const auto partition = static_cast<int32_t>(part["PartitionIndex"].as_int());
      calls.add(handle_list_offsets(s, topic["Name"].as_string(), partition,
                                    part["Timestamp"].as_int())
                    .then([t, partition](answer<list_offsets_result>&& a) {
                      return partition_answer{t, partition, std::move(a)};
                    }));
    }
  }
  return kj::joinPromises(calls.releaseAsArray())
      .then([req = std::move(req)](kj::Array<partition_answer>&& answers) {
        auto out = kafka::make_message(kafka::list_offsets_api, kafka::message_kind::response);
        const auto& topics = req.body["Topics"].as_array();
        value::array_type responses;
        for (size_t t = 0; t < topics.size(); ++t) {
          auto topic = element_of(out, "Topics");
          topic["Name"] = value(topics[t].as_struct()["Name"].as_string());
          value::array_type parts;
          for (const auto& a : answers) {
            if (a.topic != t) continue;
            auto part = element_of(topic, "Partitions");
            part["PartitionIndex"] = value(int64_t{a.partition});
            part["ErrorCode"] = value(int64_t{kafka_error_code(a.result.err.code)});
            if (a.result.ok()) {
              part["Timestamp"] = value(int64_t{a.result.value.timestamp});
              part["Offset"] = value(a.result.value.found);
            }
            parts.emplace_back(std::move(part));
          }
          topic["Partitions"] = value(std::move(parts));
          responses.emplace_back(std::move(topic));
        }
        out["Topics"] = value(std::move(responses));
        return response_frame(kafka::list_offsets_api, req, out);
      });
}

} // namespace capstan
