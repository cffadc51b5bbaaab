#include "actors/gateway/kafka/kafka_fetch.hpp"

#include <algorithm>
#include <limits>
#include <memory>

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

using answers = kj::Array<partition_answer>;

// Every partition of the request, in its order: each answers at once (`wait` false), or waits
// for MinBytes of its own within MaxWaitMs.
kj::Vector<kj::Promise<partition_answer>> ask_partitions(const client_session& s,
                                                         const kafka::request& req, bool wait) {
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
      args.max_wait_ms = wait ? static_cast<int32_t>(body["MaxWaitMs"].as_int()) : 0;
      args.current_leader_epoch = static_cast<int32_t>(part["CurrentLeaderEpoch"].as_int());
      calls.add(handle_fetch(s, args).then([t, partition = args.partition](answer<fetch_result>&& a) {
        return partition_answer{t, partition, std::move(a)};
      }));
    }
  }
  return calls;
}

// Whether a partition's answer ends the wait: records, or an error the client must hear of now.
bool answers_now(const answer<fetch_result>& a) {
  return !a.ok() || a.value.records.size > 0;
}

// Whether the first pass is the response: MaxWaitMs 0, an error, or MinBytes there in total.
bool enough(const answers& first, const kafka::request& req) {
  if (req.body["MaxWaitMs"].as_int() <= 0) return true;
  int64_t total = 0;
  for (const auto& a : first) {
    if (!a.result.ok()) return true;
    total += static_cast<int64_t>(a.result.value.records.size);
  }
  return total >= req.body["MinBytes"].as_int();
}

// The waiting pass: done once one partition has something to say, or all of them ran out their
// MaxWaitMs. Each answer is looked at as it comes (eagerly: kj runs a joined promise's
// continuations only once the whole join is done). The other partitions' waits are then dropped: their replicas answer into nothing when
// their own wait ends, and their parked-fetch places are held until then.
kj::Promise<void> wait_for_any(const client_session& s, const kafka::request& req) {
  auto paf = kj::newPromiseAndFulfiller<void>();
  auto first = std::make_shared<kj::Own<kj::PromiseFulfiller<void>>>(kj::mv(paf.fulfiller));
  kj::Vector<kj::Promise<void>> waits;
  for (auto& call : ask_partitions(s, req, true))
    waits.add(call.then([first](partition_answer&& a) {
      if (answers_now(a.result) && (*first)->isWaiting()) (*first)->fulfill();
    }).eagerlyEvaluate(nullptr));
  // The fulfiller lives until the race is decided: dropped unfulfilled when every wait ended
  // without records, it would reject the promise the race still holds.
  return paf.promise.exclusiveJoin(kj::joinPromises(waits.releaseAsArray())).attach(kj::mv(first));
}

bytes respond(const kafka::request& req, const answers& got) {
  auto out = kafka::make_message(kafka::fetch_api, kafka::message_kind::response);
  const auto& topics = req.body["Topics"].as_array();
  // The response's MaxBytes, partitions taken in request order.
  const int64_t max_bytes = req.body["MaxBytes"].as_int();
  size_t budget = max_bytes > 0 ? static_cast<size_t>(max_bytes) : 0;
  bool sent_any = false;
  value::array_type responses;
  for (size_t t = 0; t < topics.size(); ++t) {
    auto topic = element_of(out, "Responses");
    topic["Topic"] = value(topics[t].as_struct()["Topic"].as_string());
    value::array_type parts;
    for (const auto& a : got) {
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
        auto records = unpadded_batches(bytes_view{slice.data, slice.size}, budget, !sent_any);
        budget -= std::min(budget, records.size());
        sent_any = sent_any || !records.empty();
        part["Records"] = value(std::move(records));
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
}

} // namespace

kj::Promise<bytes> serve_fetch(const client_session& s, kafka::request req) {
  auto shared = std::make_shared<kafka::request>(std::move(req));
  return kj::joinPromises(ask_partitions(s, *shared, false).releaseAsArray())
      .then([s, shared](answers&& first) -> kj::Promise<bytes> {
        if (enough(first, *shared)) return respond(*shared, first);
        return wait_for_any(s, *shared).then([s, shared] {
          return kj::joinPromises(ask_partitions(s, *shared, false).releaseAsArray())
              .then([shared](answers&& last) { return respond(*shared, last); });
        });
      });
}

} // namespace capstan
