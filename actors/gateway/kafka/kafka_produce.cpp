#include "actors/gateway/kafka/kafka_produce.hpp"

#include <kj/exception.h>

#include "actors/gateway/handlers/produce_handler.hpp"
#include "actors/gateway/kafka/kafka_error_code.hpp"
#include "actors/gateway/kafka/kafka_response_frame.hpp"
#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/message_codec.hpp"

namespace capstan {

namespace {

using kafka::struct_value;
using kafka::value;

struct partition_answer {
  size_t topic = 0;
  int32_t partition = 0;
  answer<produce_answer> result;
};

} // namespace

kj::Promise<bytes> serve_produce(const client_session& s, kafka::request req) {
  const auto& body = req.body;
  const auto acks = static_cast<int16_t>(body["Acks"].as_int());
  const auto timeout_ms = static_cast<int32_t>(body["TimeoutMs"].as_int());
  const auto& topics = body["TopicData"].as_array();
  kj::Vector<kj::Promise<partition_answer>> calls;
  for (size_t t = 0; t < topics.size(); ++t) {
    const auto& topic = topics[t].as_struct();
    for (const auto& p : topic["PartitionData"].as_array()) {
      const auto& part = p.as_struct();
      produce_args args;
      args.topic = topic["Name"].as_string();
      args.partition = static_cast<int32_t>(part["Index"].as_int());
      args.acks = acks;
      args.timeout_ms = timeout_ms;
      if (!part["Records"].is_null()) args.records = part["Records"].as_bytes();
      // The handler copies the batch before it returns: `req` may go once the loop is done.
      calls.add(handle_produce(s, args).then(
          [t, partition = args.partition](answer<produce_answer>&& a) {
            return partition_answer{t, partition, std::move(a)};
          }));
    }
  }
  return kj::joinPromises(calls.releaseAsArray())
      .then([req = std::move(req), acks](kj::Array<partition_answer>&& answers) -> bytes {
        for (const auto& a : answers)
          if (a.result.value.drop_response)
            kj::throwFatalException(KJ_EXCEPTION(
                DISCONNECTED, "produce response dropped by the fault switch (injectFault)"));
        if (acks == 0) return {};
        auto out = kafka::make_message(kafka::produce_api, kafka::message_kind::response);
        const auto& topics = req.body["TopicData"].as_array();
        value::array_type responses;
        for (size_t t = 0; t < topics.size(); ++t) {
          auto topic = element_of(out, "Responses");
          topic["Name"] = value(topics[t].as_struct()["Name"].as_string());
          value::array_type parts;
          for (const auto& a : answers) {
            if (a.topic != t) continue;
            auto part = element_of(topic, "PartitionResponses");
            part["Index"] = value(int64_t{a.partition});
            part["ErrorCode"] = value(int64_t{kafka_error_code(a.result.err.code)});
            if (a.result.ok()) {
              const auto& r = a.result.value.appended;
              part["BaseOffset"] = value(r.base_offset.value());
              part["LogAppendTimeMs"] = value(int64_t{r.log_append_time});
              part["LogStartOffset"] = value(r.log_start.value());
            } else {
              part["BaseOffset"] = value(int64_t{-1});
              part["ErrorMessage"] = value(a.result.err.message);
            }
            parts.emplace_back(std::move(part));
          }
          topic["PartitionResponses"] = value(std::move(parts));
          responses.emplace_back(std::move(topic));
        }
        out["Responses"] = value(std::move(responses));
        return response_frame(kafka::produce_api, req, out);
      });
}

} // namespace capstan
