#pragma once

// A partition's idempotent-producer state (Kafka's ProducerStateManager with ProducerAppendInfo,
// KIP-98 as amended by KIP-360): per producer id its epoch and the last 5 batches it wrote, so
// that a leader answers a retried batch with its original offsets instead of appending it twice,
// and refuses a batch that would leave a gap. Rules and the Kafka behaviour they follow:
// docs/idempotence.md. The partition log (actors/log/partition_log_actor.cpp) owns one per
// partition; the client's side is runtime/client/producer_sequencer.hpp.
//
// Appending is two-phase so that a failed append changes nothing: check() looks at an incoming
// batch and says what to do; once the batch is in the log, commit() records it at its offsets.
// Not thread-safe: one owner (the partition log) calls everything.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <span>

#include "runtime/batch/record_batch_view.hpp"
#include "runtime/result.hpp"
#include "runtime/types.hpp"

namespace capstan {

// The producer id of a batch from a producer without idempotence: no state, no checks.
inline constexpr int64_t no_producer_id = -1;
// How many batches per producer a duplicate is looked for in (Kafka's NUM_BATCHES_TO_RETAIN, the
// client's max.in.flight.requests.per.connection limit with idempotence).
inline constexpr size_t producer_batches_retained = 5;
// Kafka's producer.id.expiration.ms default (one day).
inline constexpr int64_t default_producer_id_expiration_ms = 86'400'000;
// How often a partition log looks for expired producers: Kafka's
// producer.id.expiration.check.interval.ms default (ten minutes), an internal setting there too.
inline constexpr int64_t producer_expiration_check_interval_ms = 600'000;

// The sequence `delta` past `sequence`, wrapping from INT32_MAX to 0 as Kafka's
// DefaultRecordBatch.incrementSequence. REQUIRES: sequence >= 0, delta >= 0.
int32_t increment_sequence(int32_t sequence, int32_t delta);

// Where a batch comes from. Only a producer's batch at the leader is deduplicated and checked; a
// follower (or a rebuild from the log) takes what the leader appended, so it ends with the state
// the leader has and deduplicates the same way once it leads.
enum class producer_origin { client, replication };

// The header fields of a batch that producer state looks at.
struct producer_batch {
  int64_t producer_id = no_producer_id;
  int16_t epoch = -1;
  int32_t base_sequence = -1;
  // lastOffsetDelta: record count - 1 in a produced batch; a compacted batch keeps it, so the
  // sequence range of a stored batch is still base .. base + delta.
  int32_t last_offset_delta = 0;
  timestamp_ms max_timestamp = no_timestamp;

  static producer_batch of(const record_batch_view& batch);
};

// One retained batch of a producer, at the offsets the log gave it.
struct producer_batch_entry {
  int32_t first_sequence = 0;
  int32_t last_sequence = 0;
  offset first_offset{0};
  offset last_offset{0};
  timestamp_ms max_timestamp = no_timestamp;
  bool operator==(const producer_batch_entry&) const = default;
};

// A producer's state: its current epoch and its last batches of that epoch, oldest first, at most
// producer_batches_retained and never none.
struct producer_entry {
  int16_t epoch = -1;
  std::deque<producer_batch_entry> batches;

  int32_t last_sequence() const { return batches.back().last_sequence; }
  // Kafka's lastTimestamp: the max timestamp of the producer's last batch, what expiry goes by.
  timestamp_ms last_timestamp() const { return batches.back().max_timestamp; }
  bool operator==(const producer_entry&) const = default;
};

// What check() found for a batch that may be appended: commit() applies it.
struct producer_append_info {
  producer_batch batch;
  int32_t last_sequence = -1;
};

// check()'s answer: either the batch is a duplicate (answer the producer with the original
// offsets, append nothing), or it is to be appended and then committed with `append`.
struct producer_check {
  std::optional<producer_batch_entry> duplicate;
  producer_append_info append;
};

class producer_state {
public:
  producer_state() = default;
  producer_state(const producer_state&) = default;
  producer_state& operator=(const producer_state&) = default;
  producer_state(producer_state&&) = default;
  producer_state& operator=(producer_state&&) = default;

  // Checks a batch about to be appended; changes nothing. For origin client, in this order:
  // a batch without producer id passes; a negative epoch or base sequence with a producer id is
  // INVALID_RECORD; an unknown producer passes at any sequence (Kafka since KIP-360: its state may
  // have expired or been truncated away); the same epoch and exactly the sequence range of a
  // retained batch is a duplicate; an older epoch is INVALID_PRODUCER_EPOCH; a newer epoch must
  // start at sequence 0 and the same epoch must continue at last sequence + 1 (wrapping), else
  // OUT_OF_ORDER_SEQUENCE_NUMBER. For origin replication, every batch passes.
  result<producer_check> check(const producer_batch& batch, producer_origin origin) const;

  // Records an appended batch whose first record got `first_offset`. A new epoch drops the
  // producer's batches of the old one. Also moves end_offset() past the batch.
  // REQUIRES: `info` came from check() on this state, unchanged since, with no duplicate.
  void commit(const producer_append_info& info, offset first_offset);

  // check(replication) then commit at the batch's own base offset: a follower's append, or
  // one step of a rebuild from the log.
  void replay(const record_batch_view& batch);
  // The same for a batch known by its header fields only (a scan of stored batches).
  void replay(const producer_batch& batch, offset base_offset);

  // After the log was truncated to `end` (offsets >= end gone): drops the batches at or past it
  // and the producers left with none, and lowers end_offset() to `end`. Such a producer is then
  // unknown and its next batch passes at any sequence (Kafka would rebuild it from an older
  // snapshot; rebuilding from one is the caller's choice, see docs/idempotence.md).
  void truncate_to(offset end);

  // Removes producers whose last batch's max timestamp is at least expiration_ms before `now`
  // (Kafka's producer.id.expiration.ms check); returns how many.
  size_t expire(timestamp_ms now, int64_t expiration_ms = default_producer_id_expiration_ms);

  // The producer's state, or nullptr when unknown.
  const producer_entry* find(int64_t producer_id) const;
  const std::map<int64_t, producer_entry>& producers() const { return producers_; }
  // The offset after the last batch this state has seen (Kafka's lastMapOffset): where a
  // snapshot of it is named, and where a rebuild continues.
  offset end_offset() const { return end_; }

  // For a snapshot read back. REQUIRES: every entry has 1..producer_batches_retained batches.
  void restore(int64_t producer_id, producer_entry entry);
  void set_end_offset(offset end) { end_ = end; }

  bool operator==(const producer_state&) const = default;

private:
  std::map<int64_t, producer_entry> producers_;
  offset end_{0};
};

// Replays `batches` (in log order) into `state`, skipping those that end before `from`: a
// rebuild from the log after a snapshot that covers offsets below `from`.
void replay_batches(producer_state& state, std::span<const record_batch_view> batches, offset from);

} // namespace capstan
