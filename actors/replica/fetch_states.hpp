#pragma once

// What a replica fetcher knows of each partition it fetches (Kafka's PartitionFetchState): the
// leader epoch it follows, its fetch offset (the local log end), whether it must first truncate
// by leader epoch, and when it may try again after an error. Plain bookkeeping: the fetcher
// actor asks which partitions to put in its next OffsetsForLeaderEpoch or Fetch and reports what
// came back.

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "runtime/storage/offset_checkpoint.hpp"
#include "runtime/types.hpp"

namespace capstan {

enum class fetch_phase : uint8_t {
  truncating, // OffsetsForLeaderEpoch first (KIP-101/279)
  fetching,
};

// What the local replica last took from a fetch: its log end then, the leader's high watermark
// and log start it was given, and which actor took them (the partition's route may change to
// another actor under the same epoch: an offline replica's, which refuses everything).
struct handed_over {
  offset log_end{0};
  offset high_watermark{0};
  offset log_start{0};
  uint64_t taker = 0; // the replica actor's id
  bool operator==(const handed_over&) const = default;
};

struct partition_fetch_state {
  leader_epoch epoch{0};  // the leader epoch the follower follows
  offset fetch_offset{0}; // the local log end offset
  fetch_phase phase = fetch_phase::truncating;
  timestamp_ms delayed_until = 0; // no request for it before this time (after an error)
  // Unset until the replica takes an answer under this epoch, and again after a truncation or a
  // restart.
  std::optional<handed_over> handed;
};

class fetch_states {
public:
  fetch_states() = default;
  fetch_states(const fetch_states&) = default;
  fetch_states& operator=(const fetch_states&) = default;
  fetch_states(fetch_states&&) = default;
  fetch_states& operator=(fetch_states&&) = default;

  // Starts (or restarts, under a new epoch) fetching `tp` at `log_end`; `truncate_first` for a
  // follower that has epoch information to check against the leader.
  void add(const topic_partition& tp, leader_epoch epoch, offset log_end, bool truncate_first);
  // Stops fetching `tp`; with `epoch`, only if it is still followed under that epoch (a fetcher
  // fenced by its leader must not drop a partition that a newer LeaderAndIsr re-added).
  bool remove(const topic_partition& tp, std::optional<leader_epoch> epoch = std::nullopt);

  // The partitions ready for the given phase at `now`.
  std::vector<topic_partition> ready(fetch_phase phase, timestamp_ms now) const;

  // Truncation finished at `log_end`; incomplete means ask again with the now older epoch.
  void truncated(const topic_partition& tp, leader_epoch epoch, offset log_end, bool complete);
  // The log now ends at `log_end` by other means than a fetch's answer (a restart at the
  // leader's log start).
  void advanced(const topic_partition& tp, leader_epoch epoch, offset log_end);
  // The replica took a fetch's answer and now ends at `taken.log_end`.
  void handed(const topic_partition& tp, leader_epoch epoch, const handed_over& taken);
  // True when an answer without records that brings `high_watermark` and `log_start` to the
  // replica actor `taker` would change nothing there: that actor took exactly these at its
  // present log end. A follower of thousands of idle partitions then sends its replicas nothing
  // for most of each fetch.
  static bool nothing_new(const partition_fetch_state& s, offset high_watermark, offset log_start,
                          uint64_t taker);
  // Truncate again before the next fetch (e.g. the leader answered OFFSET_OUT_OF_RANGE).
  void needs_truncation(const topic_partition& tp, leader_epoch epoch);
  // No request for `tp` (or for every partition) before `until`.
  void delay(const topic_partition& tp, leader_epoch epoch, timestamp_ms until);
  void delay_all(timestamp_ms until);

  // The earliest delayed_until in the future of `now`, if any partition waits.
  std::optional<timestamp_ms> next_wakeup(timestamp_ms now) const;

  const partition_fetch_state* find(const topic_partition& tp) const;
  size_t size() const { return states_.size(); }
  bool empty() const { return states_.empty(); }

private:
  // The state of `tp` if it is followed under `epoch`, else nullptr (a stale answer).
  partition_fetch_state* current(const topic_partition& tp, leader_epoch epoch);

  std::map<topic_partition, partition_fetch_state> states_;
};

} // namespace capstan
