#pragma once

// Builds one RecordBatch v2, uncompressed unless told a codec, for clients and tests. Offsets in
// the built batch are relative (base offset as given, usually 0); the leader assigns real ones on
// append.
// Uncompressed, the bytes are exactly what Kafka's MemoryRecordsBuilder writes for the same
// records when base_timestamp is the first record's timestamp, as Kafka picks it
// (docs/formats.md, "Record batch"): CreateTime, partition leader epoch and producer id, epoch
// and base sequence -1 unless set, max timestamp = the largest record timestamp (-1 when none).
// Compressed, the header is the same and the records section is the codec's stream of them,
// whose bytes depend on the codec library's version and settings.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/batch/compression.hpp"
#include "runtime/types.hpp"

namespace capstan {

class record_batch_builder {
public:
  explicit record_batch_builder(offset base = offset{0}, timestamp_ms base_timestamp = 0);

  record_batch_builder(const record_batch_builder&) = delete;
  record_batch_builder& operator=(const record_batch_builder&) = delete;
  record_batch_builder(record_batch_builder&&) = default;
  record_batch_builder& operator=(record_batch_builder&&) = default;

  // Appends a record at the next offset delta, timestamp delta = timestamp - base timestamp.
  // nullopt key = null key; nullopt value = tombstone; a header's nullopt value = null value.
  record_batch_builder& add(std::optional<bytes_view> key, std::optional<bytes_view> value,
                            timestamp_ms timestamp,
                            std::vector<std::pair<bytes, std::optional<bytes>>> headers = {});
  record_batch_builder& add(std::string_view key, std::string_view value, timestamp_ms timestamp);

  // Skips offset deltas, as a compacted batch has; only for tests of stored batches. Skipping
  // after the last record raises lastOffsetDelta as a compacted batch keeps it.
  // REQUIRES: n >= 0.
  record_batch_builder& skip_offsets(int32_t n);

  record_batch_builder& producer(int64_t id, int16_t epoch, int32_t base_sequence);
  record_batch_builder& leader_epoch(capstan::leader_epoch epoch);
  // The codec build() compresses the records section with and names in the attributes. Kept
  // across reset: it is the producer's setting, not the batch's.
  record_batch_builder& compress_with(compression codec);

  int32_t record_count() const { return count_; }
  // Encoded size the batch would have now, before compression: what a producer fills a batch
  // up to, as Kafka's producer estimates.
  size_t size_bytes() const;

  // Finishes the header and CRC; lastOffsetDelta = the last delta used or skipped. A builder
  // with no record and no skipped offset builds a batch with lastOffsetDelta -1, which
  // record_batch_view::parse rejects.
  bytes build() const;
  // Back to the state of a freshly constructed builder (producer and leader epoch included),
  // keeping the record buffer's capacity.
  void reset(offset base, timestamp_ms base_timestamp);

private:
  offset base_;
  timestamp_ms base_timestamp_;
  timestamp_ms max_timestamp_;
  int32_t next_delta_ = 0;
  int32_t count_ = 0;
  int64_t producer_id_ = -1;
  int16_t producer_epoch_ = -1;
  int32_t base_sequence_ = -1;
  int32_t leader_epoch_ = -1;
  compression codec_ = compression::none;
  bytes records_;
};

} // namespace capstan
