#pragma once

// Fetch: one partition's records from its leader (or, for a follower fetch, any) replica on this
// node, long-polled within the parked-fetch caps (parked_fetch_limiter.hpp).

#include <cstdint>
#include <string>

#include "actors/gateway/handlers/handler_support.hpp"

namespace capstan {

struct fetch_args {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  int32_t max_bytes = 0;
  int32_t min_bytes = 0;
  int32_t max_wait_ms = 0;
  // Any negative epoch is "not checked", as Kafka's -1.
  int32_t current_leader_epoch = -1;
  int32_t last_fetched_epoch = -1;
};

// Validates (validate_fetch, with maxBytes lowered to the node's cap), routes and asks the
// replica. A fetch that may wait parks if the caps allow, else is answered at once with what is
// there (as Kafka would, never an error). The answer's records are stored bytes, held by their
// log_slice owner: a front door sends them without copying where it can. Counts the request,
// its error, the bytes out and the latency.
kj::Promise<answer<fetch_result>> handle_fetch(const client_session& s, const fetch_args& args);

} // namespace capstan
