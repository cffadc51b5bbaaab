#pragma once

// A producer's batch that passed the full validation of a produce (record_batch_view::parse in
// produce mode: framing, CRC-32C, varints, the producer's offset-delta and timestamp rules), in
// a buffer of its own. The gateway makes one for every client produce; the partition log's
// leader append then takes it without parsing it again and checks only what the partition alone
// knows (max.message.bytes, the timestamp window around the leader's clock, control batches,
// keys of a compacted topic, the producer state). So a produce is validated once, not once in
// the gateway and again in the log. Batches from elsewhere (internal producers, replication)
// travel as a plain batch_buffer and the log validates them in full.
//
// Only validate() makes one, so holding one is the proof. Copies share the buffer; the log
// patches the base offset and leader epoch in place, which the CRC does not cover.

#include <cstddef>
#include <optional>

#include "actors/log/batch_buffer.hpp"
#include "runtime/batch/record_batch_view.hpp"
#include "runtime/result.hpp"
#include "runtime/types.hpp"

namespace capstan {

class validated_batch {
public:
  // Copies `records` into a buffer of its own and validates the batch at its start in produce
  // mode, without a timestamp window (record_batch_view::parse: CORRUPT_MESSAGE,
  // INVALID_RECORD, INVALID_TIMESTAMP, UNSUPPORTED_COMPRESSION_TYPE, MESSAGE_TOO_LARGE above
  // max_batch_bytes). Bytes after the batch are not looked at and not part of buffer().
  static result<validated_batch> validate(bytes_view records, size_t max_batch_bytes);

  // Exactly the batch.
  const batch_buffer& buffer() const { return buffer_; }
  const record_batch_view& view() const { return view_; }
  size_t size() const { return buffer_.size(); }

  // True iff every record timestamp other than no_timestamp lies within `bounds` (the check
  // parse makes with bounds, answered from the smallest and largest record timestamps found at
  // validation).
  bool within(const timestamp_bounds& bounds) const;

private:
  validated_batch(batch_buffer buffer, record_batch_view view);

  batch_buffer buffer_;
  record_batch_view view_;
  // Smallest and largest record timestamps other than no_timestamp; nullopt when there are none.
  std::optional<timestamp_ms> min_timestamp_;
  std::optional<timestamp_ms> max_timestamp_;
};

} // namespace capstan
