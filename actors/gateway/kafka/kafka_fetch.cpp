#include "actors/gateway/kafka/kafka_fetch.hpp"

#include <algorithm>

#include "actors/gateway/handlers/fetch_handler.hpp"
#include "actors/gateway/kafka/kafka_error_code.hpp"
#include "actors/gateway/kafka/kafka_record_set.hpp"
#include "actors/gateway/kafka/kafka_response_frame.hpp"
#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/message_codec.hpp"

namespace capstan {

namespace {

using kafka::value;

struct partition_answer {
  size_t topic = 0;
  int32_t partition = 0;
  answer<fetch_result> result;
};

} // namespace

kj::Promise<bytes> serve_fetch(const client_session& s, kafka::request req) {
  const auto& body = req.body;
  const auto& topics = body["Topics"].as_array();
  kj::Vector<kj::Promise<partition_answer>> calls;
  for (size_t t = 0; t < topics.size(); ++t) {
    const auto& topic = topics[t].as_struct();
    for (const auto& p : topic["Partitions"].as_array()) {
      const auto& part = p.as_struct();
      fetch_args args;
      args.topic = topic["Topic"].as_string();
      args.partition = static_cast<int32_t>(part["Partition"].as_int());
      args.offset = part["FetchOffset"].as_int();
      args.max_bytes = static_cast<int32_t>(part["PartitionMaxBytes"].as_int());
      args.min_bytes = static_cast<int32_t>(body["MinBytes"].as_int());
      args.max_wait_ms = static_cast<int32_t>(body["MaxWaitMs"].as_int());
      args.current_leader_epoch = static_cast<int32_t>(part["CurrentLeaderEpoch"].as_int());
      calls.add(handle_fetch(s, args).then([t, partition = args.partition](answer<fetch_result>&& a) {
        return partition_answer{t, partition, std::move(a)};
      }));
    }
  }
  return kj::joinPromises(calls.releaseAsArray())
      .then([req = std::move(req)](kj::Array<partition_answer>&& answers) {
        auto out = kafka::make_message(kafka::fetch_api, kafka::message_kind::response);
        const auto& topics = req.body["Topics"].as_array();
        value::array_type responses;
        for (size_t t = 0; t < topics.size(); ++t) {
          auto topic = element_of(out, "Responses");
          topic["Topic"] = value(topics[t].as_struct()["Topic"].as_string());
          value::array_type parts;
          for (const auto& a : answers) {
            if (a.topic != t) continue;
            auto part = element_of(topic, "Partitions");
            part["PartitionIndex"] = value(int64_t{a.partition});
            part["ErrorCode"] = value(int64_t{kafka_error_code(a.result.err.code)});
            part["AbortedTransactions"] = value(value::array_type{});
            if (a.result.ok()) {
              const auto& r = a.result.value;
              part["HighWatermark"] = value(r.high_watermark.value());
              // No transactions: everything below the high watermark is stable.
              part["LastStableOffset"] = value(r.high_watermark.value());
              part["LogStartOffset"] = value(r.log_start.value());
              const log_slice& slice = r.records;
              part["Records"] = value(unpadded_batches(bytes_view{slice.data, slice.size}));
            } else {
              part["HighWatermark"] = value(int64_t{-1});
              part["Records"] = value(bytes{});
            }
            parts.emplace_back(std::move(part));
          }
          topic["Partitions"] = value(std::move(parts));
          responses.emplace_back(std::move(topic));
        }
        out["Responses"] = value(std::move(responses));
        return response_frame(kafka::fetch_api, req, out);
      });
}

} // namespace capstan
