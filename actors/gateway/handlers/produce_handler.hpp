#pragma once

// Produce: one record batch to one partition's leader replica on this node.

#include <cstdint>
#include <string>

#include "actors/gateway/handlers/handler_support.hpp"
#include "runtime/types.hpp"

namespace capstan {

struct produce_args {
  std::string topic;
  int32_t partition = 0;
  int16_t acks = -1;
  int32_t timeout_ms = 0;
  // The batch as the client sent it, optionally followed by its zero padding (docs/formats.md).
  // Only read before handle_produce returns: validation copies it into a buffer the request owns,
  // since the replica patches offsets in place.
  bytes_view records;
};

struct produce_answer {
  produce_result appended;
  // The node's fault switch (injectFault DROP_PRODUCE_RESPONSES) took this response: the batch
  // is appended, and the front door drops the connection instead of answering.
  bool drop_response = false;
};

// Validates (request_validation.hpp: topic, partition, acks, timeout, the batch), routes and
// asks the replica; counts the request, its error, the bytes accepted and the latency.
kj::Promise<answer<produce_answer>> handle_produce(const client_session& s,
                                                   const produce_args& args);

} // namespace capstan
