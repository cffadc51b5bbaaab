#pragma once

// What a node holds durably: the hard state, the latest snapshot and the log entries after it.
// raft_core starts from one; raft_storage keeps one in step with its files; the simulation's
// in-memory disks are one. The operations are the persistence steps of a ready (raft_ready.hpp)
// and keep the log consecutive after the snapshot.

#include <span>
#include <vector>

#include "actors/controller/raft/raft_types.hpp"

namespace capstan::raft {

struct durable_state {
  hard_state hard;
  snapshot snap;              // index 0: no snapshot yet
  std::vector<entry> entries; // consecutive from snap.meta.index + 1

  log_index last_index() const { return snap.meta.index + entries.size(); }

  // Drops every entry with index >= i (none when i is past the end).
  // REQUIRES: i > snap.meta.index.
  void truncate_from(log_index i);
  // Replaces the snapshot and drops the entries it covers; entries after it stay only if they
  // follow it without a gap. REQUIRES: s.meta.index > snap.meta.index.
  void save_snapshot(snapshot s);
  // REQUIRES: es are consecutive from last_index() + 1.
  void append(std::span<const entry> es);
};

} // namespace capstan::raft
