#pragma once

// The core's in-memory view of the Raft log: the latest snapshot (covering every index up to its
// own) followed by consecutive entries. It also remembers which changes the driver has not been
// handed yet (ready::truncate_from, snapshot, entries), so the core can say what to persist.
// Metadata logs are small and compacted by snapshots, so the whole log lives in memory.

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "actors/controller/raft/raft_types.hpp"

namespace capstan::raft {

class raft_log {
public:
  // The log as storage holds it. `snap` may be the empty snapshot (index 0, term 0).
  // REQUIRES: entries are consecutive from snap.meta.index + 1.
  raft_log(snapshot snap, std::vector<entry> entries);

  raft_log(const raft_log&) = default;
  raft_log& operator=(const raft_log&) = default;
  raft_log(raft_log&&) = default;
  raft_log& operator=(raft_log&&) = default;

  log_index snapshot_index() const { return snapshot_.meta.index; }
  raft_term snapshot_term() const { return snapshot_.meta.term; }
  const snapshot& latest_snapshot() const { return snapshot_; }
  // The first index held as an entry (not only through the snapshot).
  log_index first_index() const { return snapshot_index() + 1; }
  log_index last_index() const { return snapshot_index() + entries_.size(); }
  raft_term last_term() const;
  std::span<const entry> entries() const { return entries_; }

  // The term of the entry at `i`, including the snapshot's last one; nullopt when `i` is
  // compacted away (below the snapshot) or beyond the end.
  std::optional<raft_term> term_at(log_index i) const;
  bool matches(log_index i, raft_term t) const { return term_at(i) == t; }

  // REQUIRES: first_index() <= i <= last_index().
  const entry& at(log_index i) const;

  // Entries from `from` on: at most max_entries, and no more data bytes than max_bytes beyond the
  // first entry (which always goes, however large). REQUIRES: first_index() <= from.
  std::span<const entry> slice(log_index from, size_t max_entries, size_t max_bytes) const;

  // Raft's election restriction (§5.4.1): a log ending at (index, term) is at least as
  // up-to-date as this one.
  bool is_up_to_date(log_index index, raft_term term) const;

  // The first index in (floor, i] holding the same term as `i`, found by walking back from `i`.
  // REQUIRES: snapshot_index() <= floor < i <= last_index().
  log_index first_index_of_term_at(log_index i, log_index floor) const;
  // The last index holding an entry of term `t`, if any entry has it.
  std::optional<log_index> last_index_of_term(raft_term t) const;

  // REQUIRES: e.index == last_index() + 1 and e.term >= last_term().
  void append(entry e);
  // Drops every entry with index >= i. REQUIRES: snapshot_index() < i <= last_index().
  void truncate_from(log_index i);
  // Replaces the whole log by `snap` (a snapshot from the leader that this log does not match).
  // REQUIRES: snap.meta.index > snapshot_index().
  void install(snapshot snap);
  // The application took `snap`: drops the entries it covers.
  // REQUIRES: snapshot_index() < snap.meta.index <= last_index() and the term matches.
  void compact(snapshot snap);

  // The voters from the last voter set entry on, or else the snapshot's (empty: the bootstrap
  // voters). A voter set takes effect when its entry is appended, committed or not, and stops
  // when a truncation removes it (docs/controller.md, "Voter changes").
  const voter_set& voters() const;
  // The voters in effect at `i`. REQUIRES: snapshot_index() <= i <= last_index().
  const voter_set& voters_at(log_index i) const;
  // The voter sets in effect from `i` to the end: the one at `i`, then each voter set entry's
  // after it. REQUIRES: snapshot_index() <= i <= last_index().
  std::vector<const voter_set*> voter_sets_from(log_index i) const;
  // The index of the last voter set entry after the snapshot, if any.
  std::optional<log_index> last_voters_index() const;

  // Changes not yet handed to the driver.
  bool has_unpersisted() const;
  // Moves them into the ready's fields and counts them as handed over.
  void take_unpersisted(std::optional<log_index>& truncate_from, std::optional<snapshot>& snap,
                        std::vector<entry>& entries);
  // The last index the driver was handed (and so, by the time the core takes another input,
  // has made durable).
  log_index persisted_index() const { return persisted_; }

private:
  // Decodes e's voter set if it holds one. REQUIRES: such an entry holds a valid set.
  void note_voters(const entry& e);

  snapshot snapshot_;
  std::vector<entry> entries_;
  // The voter set entries among entries_, decoded, ascending by index.
  std::vector<std::pair<log_index, voter_set>> configs_;
  log_index persisted_;
  std::optional<log_index> truncated_from_;
  bool snapshot_pending_ = false;
};

} // namespace capstan::raft
