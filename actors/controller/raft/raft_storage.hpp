#pragma once

// Durable storage of one controller's Raft state in a directory: its identity, the hard state,
// the latest snapshot and the log after it (formats: raft_storage_format.hpp, docs/controller.md
// "On disk" and "Quorum identity"). Plain and synchronous: every call returns once its change is
// durable (fsync), so an actor calls it off CAF's scheduler threads. The driver applies a ready's
// persistence steps through it in the order raft_ready.hpp gives.
//
// Crash safety: the identity, the hard state and the snapshot are replaced atomically, so a crash
// leaves the old or the new one. The log is append-only; open() keeps the longest prefix of frames
// that pass their CRC and follow each other, and cuts the rest (raft_log_scan.hpp).
//
// Lost and damaged state: a directory that is new, or whose files are missing, fail their checks
// or contradict each other beyond a torn last append, may lack entries this voter acknowledged
// and votes it cast. open() then gives it a new directory id and marks it catching up
// (hard_state::catching_up) before it changes anything else, keeping what is still valid; the
// Raft core takes it from there.
//
// After an I/O error the storage is failed: every later call returns KAFKA_STORAGE_ERROR.

#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "actors/controller/raft/raft_durable_state.hpp"
#include "actors/controller/raft/raft_files.hpp"
#include "actors/controller/raft/raft_storage_records.hpp"
#include "runtime/result.hpp"

namespace capstan::raft {

// What open() found.
struct log_recovery {
  uint64_t valid_bytes = 0;
  uint64_t truncated_bytes = 0;
  std::string reason; // why the log's tail was cut; empty when nothing was
  // What was lost or damaged, for the operator; empty when the directory was whole or new.
  // Otherwise the directory has a new id and the node is catching up.
  std::string lost;
  // The identity file alone was lost or damaged: the directory has a new id, and the node is as
  // its intact hard state and log say.
  std::string identity_lost;
  bool created = false; // the directory was new
};

class raft_storage {
public:
  // Opens the storage in `files` as the voter `opener` names (cluster id, node id, voters),
  // recovering the log. `opener.directory` is the id the directory takes if it is new or its
  // state was lost or damaged. A directory of another cluster is INCONSISTENT_CLUSTER_ID, of
  // another node or voter set INCONSISTENT_VOTER_SET; I/O errors are KAFKA_STORAGE_ERROR.
  static result<raft_storage> open(std::unique_ptr<raft_files> files,
                                   const directory_identity& opener);
  // The same on the directory `dir` on disk, created if needed.
  static result<raft_storage> open(const std::filesystem::path& dir,
                                   const directory_identity& opener);

  raft_storage(const raft_storage&) = delete;
  raft_storage& operator=(const raft_storage&) = delete;
  raft_storage(raft_storage&&) = default;
  raft_storage& operator=(raft_storage&&) = default;
  ~raft_storage() = default;

  // Everything durable now: what raft_core starts from.
  const durable_state& state() const { return state_; }
  const directory_identity& identity() const { return identity_; }
  const log_recovery& recovery() const { return recovery_; }

  status save_hard_state(const hard_state& hs);
  // Drops the entries with index >= i. REQUIRES: i > the snapshot's index.
  status truncate_from(log_index i);
  // Replaces the snapshot, then rewrites the log without the entries it covers (entries after
  // it stay if they follow it without a gap). REQUIRES: a higher index than the current one.
  status save_snapshot(const snapshot& s);
  // REQUIRES: entries consecutive from state().last_index() + 1.
  status append(std::span<const entry> entries);

private:
  explicit raft_storage(std::unique_ptr<raft_files> files) : files_(std::move(files)) {}

  status check_usable() const;
  status fail(status s);
  // Gives the directory `opener`'s (new) directory id, durably.
  status take_identity(const directory_identity& opener);
  // Makes the directory's new identity and the catching-up mark durable, then drops what was
  // damaged: the snapshot if `drop_snapshot`, the log beyond `keep_bytes`.
  status make_catching_up(const directory_identity& opener, bool drop_snapshot,
                          uint64_t keep_bytes);
  // Replaces the log with `base` (the entry the snapshot ends at) followed by the entries after
  // the snapshot.
  status rewrite_log(const entry& base);

  std::unique_ptr<raft_files> files_;
  directory_identity identity_;
  durable_state state_;
  std::vector<uint64_t> positions_; // file position of each entry in state_.entries
  uint64_t log_end_ = 0;
  log_recovery recovery_;
  bool failed_ = false;
};

} // namespace capstan::raft
