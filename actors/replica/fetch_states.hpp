#pragma once

// What a replica fetcher knows of each partition it fetches (Kafka's PartitionFetchState): the
// leader epoch it follows, its fetch offset (the local log end), whether it must first truncate
// by leader epoch, and when it may try again after an error. Plain bookkeeping: the fetcher
// actor asks which partitions to put in its next OffsetsForLeaderEpoch or Fetch and reports what
// came back.

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

struct partition_fetch_state {
  leader_epoch epoch{0};   // the leader epoch the follower follows
  offset fetch_offset{0};  // the local log end offset
  fetch_phase phase = fetch_phase::truncating;
  timestamp_ms delayed_until = 0; // no request for it before this time (after an error)
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
  // Fetched batches were appended: the log now ends at `log_end`.
  void advanced(const topic_partition& tp, leader_epoch epoch, offset log_end);
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
