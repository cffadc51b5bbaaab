#pragma once

// Plain checks of client RPC inputs (docs/protocol.md, "Validation"), run on the RPC thread
// before anything is sent to an actor, so a malformed request never reaches a replica or a log.
// Each check returns the named error a client sees, Kafka's where Kafka has one.

#include <cstddef>
#include <cstdint>
#include <string>

#include "actors/log/validated_batch.hpp"
#include "runtime/result.hpp"
#include "runtime/types.hpp"

namespace capstan {

// Largest fetch response payload; a larger maxBytes is lowered to it (as Kafka clamps to
// fetch.max.bytes).
inline constexpr int32_t max_fetch_bytes = int32_t{64} << 20;
// Largest produce batch the gateway accepts; the replica then applies the topic's
// max.message.bytes.
inline constexpr size_t max_produce_batch_bytes = size_t{64} << 20;
// A client's Cap'n Proto traversal limit that fits a fetch response of max_fetch_bytes plus its
// fields, and a produce of max_produce_batch_bytes, with headroom (the test client uses it; the
// server's own limit is socket.request.max.bytes, rpc_limits.hpp).
inline constexpr uint64_t rpc_traversal_limit_words = ((uint64_t{80} << 20) / 8);
// Entries a request list may hold (metadata topics, topic configs, group offsets and
// partitions). Cap'n Proto lets a list of empty structs claim as many entries as the traversal
// limit allows (10 Mi) in a few bytes, each then read as defaults; refusing a longer list before
// reading it keeps a 40-byte request from costing seconds of CPU and a gigabyte of memory.
inline constexpr size_t max_request_list_entries = 100000;

// Topic name (validate_topic_name: INVALID_TOPIC_EXCEPTION) and partition >= 0
// (UNKNOWN_TOPIC_OR_PARTITION, as Kafka answers for a partition that cannot exist).
status validate_topic_partition(const std::string& topic, int32_t partition);

// At most max_request_list_entries: INVALID_REQUEST naming the list (`what`) otherwise.
status validate_list_length(size_t entries, const char* what);

// acks in {0, 1, -1}: INVALID_REQUIRED_ACKS otherwise.
status validate_acks(int16_t acks);

// A timeout or wait >= 0: INVALID_REQUEST otherwise, naming `what`.
status validate_timeout(int32_t ms, const char* what);

// Exactly one batch, valid as a producer sends it (record_batch_view::parse in produce mode:
// CORRUPT_MESSAGE, INVALID_RECORD, INVALID_TIMESTAMP, UNSUPPORTED_COMPRESSION_TYPE,
// MESSAGE_TOO_LARGE above `max_batch_bytes`; the timestamp window is the leader's check, with its
// clock and the topic's configs), optionally followed by its zero padding to a multiple of 8 bytes
// (docs/formats.md, "Alignment"). Anything else after the batch is CORRUPT_MESSAGE. Returns the
// batch, without the padding, in a buffer of its own: a validated_batch, which the partition
// log does not validate again.
result<validated_batch> validate_produce_records(bytes_view records,
                                                 size_t max_batch_bytes = max_produce_batch_bytes);

struct fetch_limits {
  offset from{0};
  int32_t max_bytes = 0;
  int32_t min_bytes = 0;
  int32_t max_wait_ms = 0;
};

// offset >= 0 (OFFSET_OUT_OF_RANGE), maxBytes > 0, minBytes >= 0 and maxWaitMs >= 0
// (INVALID_REQUEST). maxBytes above `max_bytes_cap` is lowered to it (the server passes
// rpc_limits::max_fetch_bytes()).
result<fetch_limits> validate_fetch(int64_t from, int32_t max_bytes, int32_t min_bytes,
                                    int32_t max_wait_ms, int32_t max_bytes_cap = max_fetch_bytes);

// -2 (earliest), -1 (latest) or a timestamp >= 0: INVALID_REQUEST otherwise.
status validate_list_offsets_timestamp(int64_t timestamp);

// A consumer group id: non-empty, at most 255 bytes (INVALID_REQUEST).
status validate_group_id(const std::string& group);

// A member id, group instance id, client id, protocol type or protocol name: at most
// max_member_field_bytes (INVALID_REQUEST naming `what`).
inline constexpr size_t max_member_field_bytes = 1024;
status validate_member_field(const std::string& value, const char* what);

} // namespace capstan
