#pragma once

// The idempotent producer's bookkeeping, as plain code (Kafka's TransactionManager with its
// TxnPartitionMap, for a producer without transactions): per partition the producer id and
// epoch its batches carry, the next base sequence, and the batches in flight in sending order.
// It decides what a failed batch becomes (resent as is, or failed) and when a partition starts
// its sequences again after a batch failed for good. Rules: docs/idempotence.md, "The client".
// Not thread-safe: the producer holds its lock around every call.

#include <cstdint>
#include <deque>
#include <map>
#include <optional>

#include "runtime/client/client_config.hpp"
#include "runtime/client/cluster_client.hpp"
#include "runtime/client/record_accumulator.hpp"
#include "runtime/errc.hpp"

namespace capstan::client {

// Kafka's MAX_NUM_INFLIGHT: the broker keeps the last 5 batches per producer, so a retry of any
// batch in flight is still recognised as a duplicate.
inline constexpr int32_t max_in_flight_with_idempotence = 5;

// Whether a producer with this config is idempotent, as Kafka 3.x decides it: an unset
// enable_idempotence is true unless acks is 0 or 1 or max_in_flight exceeds 5 (then false,
// silently); an explicit true with either of those is INVALID_CONFIG naming the conflict.
result<bool> resolve_idempotence(const client_config& config);

// The header fields an idempotent producer writes into a batch.
struct batch_stamp {
  int64_t producer_id = -1;
  int16_t epoch = -1;
  int32_t base_sequence = -1;
  bool operator==(const batch_stamp&) const = default;
};

// What becomes of a batch whose request failed.
enum class failure_verdict {
  retry, // resend the same bytes (same sequence) after retry.backoff.ms
  fail,  // report the error to the batch's records; the partition restarts its sequences
  // A later batch of the partition was acknowledged, so this one is in the log: a leader appends
  // a producer's batches only in sequence order. Its offset is unknown (the leader may no longer
  // remember it among its last five): report success with offset -1, as Kafka's producer does
  // on DUPLICATE_SEQUENCE_NUMBER.
  appended,
};

class producer_sequencer {
public:
  producer_sequencer() = default;
  producer_sequencer(const producer_sequencer&) = delete;
  producer_sequencer& operator=(const producer_sequencer&) = delete;
  producer_sequencer(producer_sequencer&&) = default;
  producer_sequencer& operator=(producer_sequencer&&) = default;

  // The identity from initProducerId. Partitions that have not sent yet, and partitions waiting
  // for a new id (their epoch ran out), take it; partitions already sending keep theirs.
  void set_identity(producer_identity id);
  bool has_identity() const { return identity_.producer_id >= 0; }
  producer_identity identity() const { return identity_; }
  // True when some partition waits for a new producer id (its epoch reached INT16_MAX): the
  // sender asks initProducerId again and calls set_identity.
  bool wants_identity() const { return !has_identity() || awaiting_identity_ > 0; }

  // How many new batches `tp` may send now, out of `max_in_flight`: none while one of its batches
  // waits to be resent (resends go first and in order) or while a restart waits for its batches
  // in flight to finish. A partition whose restart can happen now restarts here: its epoch is
  // bumped (KIP-360, as Kafka's idempotent producer does locally) and sequences start at 0.
  int free_slots(const topic_partition_key& tp, int max_in_flight);

  // The stamp for the next batch of `tp` with `records` records; the batch is in flight from now.
  // REQUIRES: free_slots(tp, ...) > 0, records > 0.
  batch_stamp next(const topic_partition_key& tp, int32_t records);

  // The in-flight batch stamped `stamp` was acknowledged (appended, or a duplicate of one that
  // was). Its partition's batches still in flight before it are known appended from now.
  void acknowledged(const topic_partition_key& tp, const batch_stamp& stamp);

  // The in-flight batch stamped `stamp` failed with `code`. `appended` when a later batch of its
  // partition was acknowledged, whatever the error and the time left. Else retry when time is left
  // (`may_retry`) and the error says nothing was decided for good: a timeout, a lost connection,
  // a leader change, too few in-sync replicas; or OUT_OF_ORDER_SEQUENCE_NUMBER while an earlier
  // batch of the partition is still unacknowledged and not known appended (it may yet land and
  // close the gap). Anything else fails the batch and marks the partition for a restart of its
  // sequences.
  failure_verdict failed(const topic_partition_key& tp, const batch_stamp& stamp, errc code,
                         bool may_retry);
  // A batch that got `retry` was handed to the client again.
  void resent(const topic_partition_key& tp);

  // The partition's current stamp fields for its next batch (tests, diagnostics); nullopt when
  // the partition has not sent.
  std::optional<batch_stamp> peek(const topic_partition_key& tp) const;
  size_t in_flight(const topic_partition_key& tp) const;

private:
  struct partition {
    int64_t producer_id = -1;
    int16_t epoch = -1;
    int32_t next_sequence = 0;
    struct batch {
      int32_t base_sequence = 0;
      bool known_appended = false; // a later batch of this epoch was acknowledged
    };
    std::deque<batch> in_flight; // in sending (= sequence) order
    int waiting_resend = 0;
    bool restart_pending = false;
    bool awaiting_identity = false;
  };

  static std::deque<partition::batch>::iterator find_batch(partition& p, int32_t base_sequence);

  // Starts the partition's sequences again at 0 under a new epoch, or a new producer id when
  // the epoch is exhausted. REQUIRES: nothing in flight.
  void restart(partition& p);

  producer_identity identity_;
  std::map<topic_partition_key, partition, partition_first> partitions_;
  int awaiting_identity_ = 0;
};

} // namespace capstan::client
