#pragma once

// Kafka's OffsetFetch (versions 1-7) on the FetchOffsets handler
// (handlers/fetch_offsets_handler.hpp). Null topics (v2+) ask for every committed partition of
// the group. v7's RequireStable is met by every answer: capstan has no transactional commits
// pending.

#include <string>

#include <kj/async.h>

#include "actors/gateway/handlers/fetch_offsets_handler.hpp"
#include "runtime/kafka/message_header.hpp"

namespace capstan {

struct kafka_offset_fetch_call {
  std::string group;
  // Offsets ignored; empty: every committed partition.
  group_offsets entries;
};

// REQUIRES: `body` is a decoded OffsetFetch request.
kafka_offset_fetch_call offset_fetch_call(const kafka::struct_value& body);

// The body answering `a` at `version`, partitions grouped by topic in answer order. A refused
// request has its error at the top level from v2 and, for the partitions asked for, in each of
// them (v1 has no top-level error); a partition with nothing committed is offset -1.
kafka::struct_value offset_fetch_response_body(const answer<group_offsets>& a,
                                               const kafka_offset_fetch_call& asked,
                                               kafka::api_version version);

kj::Promise<bytes> serve_kafka_offset_fetch(const client_session& s, kafka::request req);

} // namespace capstan
