#pragma once

// The plain request and answer types of a partition log (actors/log/partition_log.hpp), shared by
// the log's bookkeeping and its actor's protocol (log_messages.hpp adds what CAF needs to carry
// them). No CAF here.

#include <cstdint>
#include <limits>
#include <memory>
#include <variant>

#include "actors/log/batch_buffer.hpp"
#include "actors/log/validated_batch.hpp"
#include "runtime/types.hpp"

namespace capstan {

// The batches of an append: bytes the log validates in full, or one producer batch the gateway
// validated already (validated_batch), which a leader append does not parse again.
using append_batches = std::variant<batch_buffer, validated_batch>;

inline const batch_buffer& buffer_of(const append_batches& b) {
  if (const auto* v = std::get_if<validated_batch>(&b)) return v->buffer();
  return std::get<batch_buffer>(b);
}

enum class append_origin : uint8_t {
  // A leader's append: validated as a producer batch, checked against the idempotent producer
  // state, offsets and leader epoch assigned here.
  leader,
  // A follower's append of fetched batches: offsets kept, each must follow the log end; their
  // producers' state is replayed without checks.
  replication,
};

struct append_request {
  append_batches batches;
  append_origin origin = append_origin::leader;
  // Leader: stamped into each batch. Follower: ignored (each batch keeps the epoch it carries,
  // and the log's leader-epoch cache learns every new one).
  leader_epoch epoch{0};
};

struct append_result {
  offset first{0};
  offset last{0};
  offset log_start{0};
  int32_t record_count = 0;
  // A leader's append of a producer's batch it already holds (docs/idempotence.md): nothing was
  // appended, and first/last are the offsets the batch got the first time.
  bool duplicate = false;
};

struct read_request {
  offset from{0};
  int64_t max_bytes = 1048576;
  // Exclusive upper bound: only batches whose last offset is below it (a high watermark).
  offset upto{std::numeric_limits<int64_t>::max()};
};

struct log_info {
  offset log_start{0};
  offset log_end{0};
  offset recovery_point{0};
  int64_t size_bytes = 0;
  int32_t segment_count = 0;
  offset cleaned_upto{0};
  leader_epoch latest_epoch{-1}; // of the leader-epoch cache; -1 when it is empty
  // The epoch of the last record in the log (the latest epoch may have none yet); -1 when the
  // log holds no record with epoch information.
  leader_epoch last_written_epoch{-1};
};

struct compaction_stats {
  int32_t segments_cleaned = 0;
  int64_t records_removed = 0;
  int64_t bytes_before = 0;
  int64_t bytes_after = 0;
};

} // namespace capstan
