#pragma once

// The producer's per-partition batching, as plain code (Kafka's RecordAccumulator): records are
// appended to the open RecordBatch v2 of their partition; a batch closes when the next record
// would take it past its limit (a record larger than that gets a batch of its own); a batch is
// ready when closed, when it holds batch.size bytes, when it has waited linger.ms, or when a
// flush is asked for. The limit is batch.size unless the producer passes a larger one for a
// partition that cannot send yet: its open batch then keeps growing (KIP-782's batch.max.size).
// Not thread-safe: the producer holds its lock around every call.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime/batch/record_batch_builder.hpp"
#include "runtime/client/cluster_client.hpp"
#include "runtime/client/record_metadata.hpp"

namespace capstan::client {

using send_callback = std::function<void(result<record_metadata>)>;
using clock_type = std::chrono::steady_clock;

struct topic_partition_key {
  std::string topic;
  int32_t partition = 0;
  auto operator<=>(const topic_partition_key&) const = default;
};

// Orders partitions before topics. The producer's per-partition maps are searched on every
// record, and a producer mostly writes one topic: comparing the partition first spares a string
// comparison at each step of the search.
struct partition_first {
  bool operator()(const topic_partition_key& a, const topic_partition_key& b) const {
    if (a.partition != b.partition) return a.partition < b.partition;
    return a.topic < b.topic;
  }
};

// A closed batch handed to the sender: encoded bytes and one callback per record (possibly empty
// functions), in record order.
struct ready_batch {
  topic_partition_key tp;
  bytes data;
  int32_t records = 0;
  size_t accounted_bytes = 0; // what this batch counts against buffer.memory
  std::vector<send_callback> callbacks;
};

class record_accumulator {
public:
  // Every batch is built compressed with `codec`; batch_size (or the limit append is given)
  // bounds its uncompressed size. `clock` stamps a batch when its first record arrives (linger.ms
  // and delivery.timeout.ms count from then); it is read only then, not for every record.
  record_accumulator(
      int32_t batch_size, std::chrono::milliseconds linger, compression codec = compression::none,
      std::function<clock_type::time_point()> clock = [] { return clock_type::now(); });
  record_accumulator(const record_accumulator&) = delete;
  record_accumulator& operator=(const record_accumulator&) = delete;

  struct append_result {
    bool new_batch = false;      // the record started a batch
    bool closed_previous = false; // ... because the previous open batch of the partition was full
  };
  // `limit`: the bytes the open batch may grow to; batch.size when 0 or below it.
  append_result append(const topic_partition_key& tp, std::optional<bytes_view> key,
                       std::optional<bytes_view> value, timestamp_ms timestamp, send_callback done,
                       size_t limit = 0);

  // True when appending a record of these sizes to `tp` would start a new batch (no open batch,
  // or the open one would overflow batch.size): the sticky partitioner moves on then (KIP-480).
  bool would_start_batch(const topic_partition_key& tp, size_t key_size, size_t value_size) const;

  // Removes and returns the batches ready at `now` (all of them when `flush`), oldest first per
  // partition, taking at most `budget(tp)` batches from a partition (the sender's free in-flight
  // slots).
  std::vector<ready_batch> drain(clock_type::time_point now, bool flush,
                                 const std::function<int(const topic_partition_key&)>& budget);

  // Removes and returns the batches created at least `timeout` before `now`, which the producer
  // fails unsent (delivery.timeout.ms counts from the batch's creation, as Kafka's does, so a
  // backlog behind a dead broker fails in one go instead of one in-flight window at a time).
  std::vector<ready_batch> expire(clock_type::time_point now, std::chrono::milliseconds timeout);

  // When the earliest open batch lingers out; nullopt when nothing is queued.
  std::optional<clock_type::time_point> next_deadline() const;
  // True when some batch is closed (full) and waiting.
  bool has_full_batch() const { return full_batches_ > 0; }
  // True when a closed batch of `tp` waits: a batch opened now would leave after it.
  bool has_closed_batch(const topic_partition_key& tp) const;
  bool empty() const { return batches_ == 0; }
  // Bytes of record data queued (what buffer.memory bounds).
  size_t queued_bytes() const { return queued_bytes_; }

  // Upper bound of one record's encoded size (Kafka's estimateSizeInBytesUpperBound).
  static size_t record_size_upper_bound(size_t key_size, size_t value_size);

private:
  size_t limit_or_batch_size(size_t limit) const {
    return std::max(limit, static_cast<size_t>(batch_size_));
  }

  struct open_batch {
    record_batch_builder builder;
    std::vector<send_callback> callbacks;
    clock_type::time_point created;
    size_t accounted_bytes = 0;
    bool closed = false;
  };

  int32_t batch_size_;
  std::chrono::milliseconds linger_;
  compression codec_;
  std::function<clock_type::time_point()> clock_;
  std::map<topic_partition_key, std::deque<open_batch>, partition_first> partitions_;
  size_t queued_bytes_ = 0;
  size_t batches_ = 0;
  size_t full_batches_ = 0;
};

} // namespace capstan::client
