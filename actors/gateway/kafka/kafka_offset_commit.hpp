#pragma once

// Kafka's OffsetCommit (versions 2-8) on the CommitOffsets handler
// (handlers/commit_offsets_handler.hpp). The retention time of v2-4 is ignored: commits expire
// by offsets.retention.minutes (docs/groups.md), as Kafka does from v5.

#include <string>

#include <kj/async.h>

#include "actors/gateway/handlers/commit_offsets_handler.hpp"
#include "runtime/kafka/message_header.hpp"

namespace capstan {

struct kafka_offset_commit_call {
  std::string group;
  group_member_ref member;
  group_offsets entries;
};

// REQUIRES: `body` is a decoded OffsetCommit request. Entries in request order; null metadata
// is empty.
kafka_offset_commit_call offset_commit_call(const kafka::struct_value& body);

// The body answering every partition of `request`: its own error from `a`, or the whole
// request's error when the handler refused it.
kafka::struct_value offset_commit_response_body(const answer<group_offsets>& a,
                                                const kafka::struct_value& request);

kj::Promise<bytes> serve_kafka_offset_commit(const client_session& s, kafka::request req);

} // namespace capstan
