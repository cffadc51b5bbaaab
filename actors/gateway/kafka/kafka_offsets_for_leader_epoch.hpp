#pragma once

// Kafka OffsetForLeaderEpoch (versions 2-4) for consumers (KIP-320) through the shared handler
// (handlers/offsets_for_leader_epoch_handler.hpp), one call per partition.

#include <vector>

#include <kj/async.h>

#include "actors/gateway/handlers/handler_support.hpp"
#include "runtime/kafka/message_header.hpp"
#include "runtime/storage/leader_epoch_cache.hpp"

namespace capstan {

// One partition's answer, in request order.
struct kafka_epoch_answer {
  size_t topic = 0;
  int32_t partition = 0;
  answer<epoch_end> result;
};

kafka::struct_value
offsets_for_leader_epoch_response_body(const std::vector<kafka_epoch_answer>& answers,
                                       const kafka::request& req);

// REQUIRES: `req` is a decoded OffsetForLeaderEpoch request at an offered version.
kj::Promise<bytes> serve_kafka_offsets_for_leader_epoch(const client_session& s,
                                                        kafka::request req);

} // namespace capstan
