#pragma once

// A zero-copy view over one RecordBatch v2 and the validator that makes it. A view exists only
// for bytes that passed validation: magic, lengths, CRC-32C (unless the caller skips it,
// crc_check), record count against lastOffsetDelta, and every record's varints in bounds. A
// compressed batch's records are validated after decompressing them (bounded, compression.hpp);
// the view keeps the decompressed records, the batch's own bytes stay as they were sent. Nothing
// here reads past the buffer it was given, and nothing throws.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "runtime/batch/compression.hpp"
#include "runtime/result.hpp"
#include "runtime/types.hpp"

namespace capstan {

struct record_header {
  bytes_view key;
  std::optional<bytes_view> value;
};

// One record inside a validated batch. Views point into the batch's bytes, or for a compressed
// batch into the decompressed records its record_batch_view holds (valid while that view, or a
// copy of it, lives).
struct record_view {
  int8_t attributes = 0;
  int64_t timestamp_delta = 0;
  int32_t offset_delta = 0;
  std::optional<bytes_view> key;   // nullopt = null key
  std::optional<bytes_view> value; // nullopt = null value (a tombstone)
  std::vector<record_header> headers;
};

enum class batch_validation {
  // As a producer sends it: offset deltas are exactly 0..count-1, CreateTime, and the header's
  // max timestamp is the largest record timestamp.
  produce,
  // As stored: compaction may have removed records, so deltas only increase and stay within
  // lastOffsetDelta.
  stored,
};

// Whether parse computes the CRC-32C. Everything else is checked either way, so a view never
// reads past its batch; only a consumer told not to (Kafka's check.crcs=false) skips it.
enum class crc_check : bool { verify, skip };

// The window a produced record's CreateTime must fall in (Kafka's message.timestamp.before.max.ms
// and message.timestamp.after.max.ms, KIP-937): [now - before_max_ms, now + after_max_ms], ends
// saturated at the int64 range. A record without a timestamp (-1) is not checked, as in Kafka.
struct timestamp_bounds {
  timestamp_ms now = 0;
  int64_t before_max_ms = std::numeric_limits<int64_t>::max();
  int64_t after_max_ms = std::numeric_limits<int64_t>::max();
};

class record_batch_view {
public:
  // Validates the batch that starts at bytes[0]. `bytes` may extend past the batch; the view
  // covers exactly batch_length + 12 bytes. Errors: CORRUPT_MESSAGE (truncated, bad magic, bad
  // CRC, bad record framing; in stored mode also offset deltas that do not increase or exceed
  // lastOffsetDelta, and a CreateTime record whose base timestamp + delta overflows int64;
  // a compressed records section that does not decompress), MESSAGE_TOO_LARGE (size above
  // max_batch_bytes, or records that decompress to more than
  // batch_format::max_decompressed_records_bytes), UNSUPPORTED_COMPRESSION_TYPE (codec bits 5-7),
  // and in produce mode INVALID_RECORD (as Kafka's LogValidator: no records, count !=
  // lastOffsetDelta + 1, or offset delta != index) and INVALID_TIMESTAMP (the LogAppendTime bit
  // set, a timestamp that overflows, a header max timestamp other than the largest record
  // timestamp, or with `bounds` a record timestamp outside them; bounds are ignored in stored
  // mode). Messages name the offending field and its offset within the batch. The CRC is checked
  // before anything it covers is interpreted (unless crc_check::skip).
  static result<record_batch_view> parse(bytes_view bytes, size_t max_batch_bytes,
                                         batch_validation mode = batch_validation::stored,
                                         const std::optional<timestamp_bounds>& bounds = {},
                                         crc_check crc = crc_check::verify);

  // Reads only the fixed header fields needed to frame a batch (base offset, length), without
  // checking the CRC: for scanning trusted data. Errors: CORRUPT_MESSAGE when bytes are too
  // short for a header (batch_format::header_size) or the length field is below the header.
  // The size returned may exceed bytes.size(): a header alone is enough to frame a batch.
  static result<size_t> frame_size(bytes_view bytes);

  bytes_view data() const { return data_; }
  size_t size_bytes() const { return data_.size(); }

  offset base_offset() const;
  offset last_offset() const { return base_offset() + last_offset_delta(); }
  int32_t last_offset_delta() const;
  leader_epoch partition_leader_epoch() const;
  int16_t attributes() const;
  timestamp_ms base_timestamp() const;
  timestamp_ms max_timestamp() const;
  int64_t producer_id() const;
  int16_t producer_epoch() const;
  int32_t base_sequence() const;
  int32_t record_count() const;
  uint32_t crc() const;
  compression codec() const;
  bool is_control() const;
  bool is_log_append_time() const;

  // A record's timestamp as Kafka's DefaultRecord reports it: the batch's max timestamp in a
  // LogAppendTime batch, else base timestamp + timestamp delta (parse checked that this fits
  // int64). REQUIRES: r came from this view's for_each_record.
  timestamp_ms timestamp_of(const record_view& r) const;

  // The records section as for_each_record reads it: the bytes after the header, or for a
  // compressed batch the decompressed records.
  bytes_view records() const;

  // Calls fn(const record_view&) for each record in order. The batch was validated, so this
  // cannot fail.
  template <class Fn>
  void for_each_record(Fn&& fn) const {
    size_t pos = 0;
    record_view r;
    while (next_record(pos, r)) fn(static_cast<const record_view&>(r));
  }

private:
  record_batch_view(bytes_view data, std::shared_ptr<const bytes> decompressed)
      : data_(data), decompressed_(std::move(decompressed)) {}
  bool next_record(size_t& pos, record_view& out) const;

  bytes_view data_;
  // The decompressed records of a compressed batch, shared by the view's copies; null otherwise.
  std::shared_ptr<const bytes> decompressed_;
};

// In-place header patches made by a leader before appending. None of the patched fields is
// covered by the CRC except max timestamp, which set_log_append_time re-checksums.
// REQUIRES: batch holds a validated batch.
void set_base_offset(std::span<uint8_t> batch, offset base);
void set_partition_leader_epoch(std::span<uint8_t> batch, leader_epoch epoch);
// Sets the LogAppendTime bit and max timestamp, then recomputes the CRC.
void set_log_append_time(std::span<uint8_t> batch, timestamp_ms now);
// Sets producer id, producer epoch and base sequence, then recomputes the CRC: an idempotent
// producer stamps a built batch when it is drained for sending (docs/idempotence.md).
void set_producer(std::span<uint8_t> batch, int64_t producer_id, int16_t epoch,
                  int32_t base_sequence);

// Iterates the batches of a padded sequence (docs/formats.md, "Alignment"): each batch starts
// at a multiple of 8 from the sequence start; the 0-7 bytes between batches must be zero.
// A sequence that ends inside a batch or with non-zero padding is CORRUPT_MESSAGE.
class batch_sequence_reader {
public:
  batch_sequence_reader(bytes_view bytes, size_t max_batch_bytes,
                        batch_validation mode = batch_validation::stored,
                        std::optional<timestamp_bounds> bounds = {},
                        crc_check crc = crc_check::verify)
      : bytes_(bytes), max_batch_bytes_(max_batch_bytes), mode_(mode), bounds_(bounds), crc_(crc) {}

  // Next validated batch, nullopt at the clean end, or the error that stopped the scan.
  // After an error, position() is where the bad batch starts, or for non-zero padding where
  // the padding starts (the end of the last good batch). After a batch, position() is the
  // batch's end (padding not yet consumed); at the clean end it is bytes.size(). The last batch
  // may be followed by its padding or end the sequence.
  result<std::optional<record_batch_view>> next();
  size_t position() const { return pos_; }

private:
  bytes_view bytes_;
  size_t max_batch_bytes_;
  batch_validation mode_;
  std::optional<timestamp_bounds> bounds_;
  crc_check crc_;
  size_t pos_ = 0;
};

} // namespace capstan
