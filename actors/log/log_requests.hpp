#pragma once

// The plain request and answer types of a partition log (actors/log/partition_log.hpp), shared by
// the log's bookkeeping and its actor's protocol (log_messages.hpp adds what CAF needs to carry
// them). No CAF here.

#include <cstdint>
#include <limits>
#include <memory>

#include "runtime/types.hpp"

namespace capstan {

// A padded batch sequence (docs/formats.md, "Alignment") handed from one actor to the next.
// The sender gives the buffer up with the message: the partition log patches offsets in place.
// [begin, end) must start at a batch and end after one.
struct batch_buffer {
  std::shared_ptr<bytes> data;
  size_t begin = 0;
  size_t end = 0;

  static batch_buffer of(bytes b) {
    auto p = std::make_shared<bytes>(std::move(b));
    size_t n = p->size();
    return {std::move(p), 0, n};
  }
  bytes_view view() const {
    return data ? bytes_view{data->data() + begin, end - begin} : bytes_view{};
  }
  size_t size() const { return end - begin; }
};

enum class append_origin : uint8_t {
  // A leader's append: validated as a producer batch, checked against the idempotent producer
  // state, offsets and leader epoch assigned here.
  leader,
  // A follower's append of fetched batches: offsets kept, each must follow the log end; their
  // producers' state is replayed without checks.
  replication,
};

struct append_request {
  batch_buffer batches;
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
};

struct compaction_stats {
  int32_t segments_cleaned = 0;
  int64_t records_removed = 0;
  int64_t bytes_before = 0;
  int64_t bytes_after = 0;
};

} // namespace capstan
