#pragma once

// Fetch, FetchResponse, OffsetsForLeaderEpoch and its response (schema/replication.capnp) to and
// from plain values. Decoding checks everything a peer could get wrong (topic names, partition
// numbers, list sizes, error codes) and returns CORRUPT_MESSAGE or INVALID_REQUEST instead of
// throwing. A fetch response references the record bytes it carries instead of copying them
// (capnp_frame::adopt): the slices' owners are pinned by the frame.

#include <string>
#include <vector>

#include "runtime/storage/leader_epoch_cache.hpp"
#include "runtime/errc.hpp"
#include "runtime/messages/capnp_frame.hpp"
#include "runtime/result.hpp"
#include "runtime/storage/log_slice.hpp"
#include "runtime/storage/offset_checkpoint.hpp"

namespace capstan {

// More partitions than this in one request is a malformed request.
inline constexpr size_t max_partitions_per_request = 100000;

struct fetch_partition {
  topic_partition tp;
  leader_epoch current_leader_epoch{-1};
  offset fetch_offset{0};
  offset log_start{-1};
  int32_t max_bytes = 1048576;
};

struct fetch_message {
  node_id replica{-1};
  // The fetching process's incarnation (all zeros: not named), KIP-903's replica epoch.
  incarnation_bytes incarnation{};
  int32_t max_wait_ms = 0;
  int32_t min_bytes = 1;
  int32_t max_bytes = 10485760;
  std::vector<fetch_partition> partitions;
};

struct fetched_partition {
  topic_partition tp;
  errc error = errc::none;
  std::string message;
  offset high_watermark{-1};
  offset log_start{-1};
  offset log_end{-1};
  // Encoding: whole batches kept alive by `records.owner`. Decoding: the bytes point into the
  // response frame (owner empty); they stay valid while that frame lives.
  log_slice records;
};

struct epoch_query {
  topic_partition tp;
  leader_epoch current_leader_epoch{-1};
  leader_epoch requested{-1};
};

struct epoch_answer {
  topic_partition tp;
  errc error = errc::none;
  std::string message;
  epoch_end end = undefined_epoch_end;
};

capnp_frame encode_fetch(const fetch_message& fetch);
result<fetch_message> decode_fetch(const capnp_frame& frame);

// Records go by reference (8-byte aligned slices; anything else is copied).
capnp_frame encode_fetch_response(const std::vector<fetched_partition>& partitions);
result<std::vector<fetched_partition>> decode_fetch_response(const capnp_frame& frame);

capnp_frame encode_epoch_queries(node_id replica, const std::vector<epoch_query>& queries);
result<std::vector<epoch_query>> decode_epoch_queries(const capnp_frame& frame);

capnp_frame encode_epoch_answers(const std::vector<epoch_answer>& answers);
result<std::vector<epoch_answer>> decode_epoch_answers(const capnp_frame& frame);

} // namespace capstan
