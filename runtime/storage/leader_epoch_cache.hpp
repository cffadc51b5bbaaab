#pragma once

// The leader-epoch cache of one partition replica (Kafka's LeaderEpochFileCache, KIP-101 and
// KIP-279): for every leader epoch this replica has seen, the offset of the first record written
// in it. A leader adds (its epoch, its LEO) when it takes over; a follower adds an entry whenever a
// fetched batch carries a newer partitionLeaderEpoch. The entries answer OffsetsForLeaderEpoch on
// the leader and tell a follower where its log diverges from the leader's, so a follower truncates
// to the end of the largest common epoch, never blindly to its high watermark.
//
// Plain and synchronous; the owner persists entries() (leader-epoch-checkpoint) whenever a
// mutating call returns true.

#include <optional>
#include <vector>

#include "runtime/types.hpp"

namespace capstan {

struct epoch_entry {
  leader_epoch epoch{0};
  offset start{0};
  friend bool operator==(const epoch_entry&, const epoch_entry&) = default;
};

// An epoch and the end offset a replica knows for it: the start offset of the next epoch, or
// the log end offset for its latest epoch.
struct epoch_end {
  leader_epoch epoch{-1};
  offset end{-1};
  friend bool operator==(const epoch_end&, const epoch_end&) = default;
};

// Kafka's UNDEFINED_EPOCH and UNDEFINED_EPOCH_OFFSET: the answer when the epoch is unknown.
inline constexpr epoch_end undefined_epoch_end{leader_epoch{-1}, offset{-1}};

class leader_epoch_cache {
public:
  leader_epoch_cache() = default;
  // Entries as read from a checkpoint; entries that break monotonicity (epochs and start offsets
  // both strictly increasing) are dropped from the first offending one on.
  explicit leader_epoch_cache(std::vector<epoch_entry> entries);

  leader_epoch_cache(const leader_epoch_cache&) = default;
  leader_epoch_cache& operator=(const leader_epoch_cache&) = default;
  leader_epoch_cache(leader_epoch_cache&&) = default;
  leader_epoch_cache& operator=(leader_epoch_cache&&) = default;

  // Records that `epoch` starts at `start`. No-op (false) when the latest entry already has this
  // epoch at a start <= `start`. Otherwise entries with an epoch >= `epoch` or a start >= `start`
  // are dropped first (they belong to a log suffix that no longer exists), and true is returned.
  // Negative epochs or offsets are ignored (false).
  bool assign(leader_epoch epoch, offset start);

  // OffsetsForLeaderEpoch: the largest epoch <= `requested` this replica knows and its end
  // offset (the next epoch's start, or `log_end` for the latest epoch). A requested epoch below
  // every known one answers (requested, first known start); above every known one, or with an
  // empty cache, undefined_epoch_end.
  epoch_end end_offset_for(leader_epoch requested, offset log_end) const;

  // The log was truncated to end at `end`: drops entries starting at or after it.
  bool truncate_from_end(offset end);

  // The log start moved to `start` (retention, or a follower restarting at the leader's log
  // start): drops entries wholly before it and moves the one covering it to start there.
  bool truncate_from_start(offset start);

  // Forgets everything (the log restarts empty at an offset with no epoch information).
  bool clear();

  std::optional<epoch_entry> latest() const;
  const std::vector<epoch_entry>& entries() const { return entries_; }
  bool empty() const { return entries_.empty(); }

private:
  std::vector<epoch_entry> entries_; // strictly increasing in epoch and start
};

} // namespace capstan
