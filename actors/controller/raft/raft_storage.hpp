#pragma once

// Durable storage of one controller's Raft state in a directory: the hard state, the latest
// snapshot and the log after it (formats: raft_storage_format.hpp, docs/controller.md). Plain
// and synchronous: every call returns once its change is durable (fsync), so an actor calls it
// off CAF's scheduler threads. The driver applies a ready's persistence steps through it in the
// order raft_ready.hpp gives.
//
// Crash safety: the hard state and the snapshot are replaced atomically (temp file, fsync,
// rename, fsync of the directory), so a crash leaves the old or the new one. The log is
// append-only; open() keeps the longest prefix of frames that pass their CRC and follow each
// other by index and term, truncates the rest (a torn tail), and never serves an entry it has not
// validated. A damaged hard state or snapshot is an error: nothing can stand in for them.
//
// After an I/O error the storage is failed: every later call returns KAFKA_STORAGE_ERROR.

#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "actors/controller/raft/raft_durable_state.hpp"
#include "runtime/result.hpp"
#include "runtime/storage/file_handle.hpp"

namespace capstan::raft {

// What open() found and cut from the log.
struct log_recovery {
  uint64_t valid_bytes = 0;
  uint64_t truncated_bytes = 0;
  std::string reason; // why the tail was cut; empty when nothing was
};

class raft_storage {
public:
  // Opens (creating it if needed) the storage in `dir`, recovering the log.
  static result<raft_storage> open(const std::filesystem::path& dir);

  raft_storage(const raft_storage&) = delete;
  raft_storage& operator=(const raft_storage&) = delete;
  raft_storage(raft_storage&&) = default;
  raft_storage& operator=(raft_storage&&) = default;
  ~raft_storage() = default;

  // Everything durable now: what raft_core starts from.
  const durable_state& state() const { return state_; }
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
  raft_storage(std::filesystem::path dir, file_handle log)
      : dir_(std::move(dir)), log_(std::move(log)) {}

  status check_usable() const;
  status fail(status s);
  status recover_log();
  status rewrite_log();

  std::filesystem::path dir_;
  file_handle log_;
  durable_state state_;
  std::vector<uint64_t> positions_; // file position of each entry in state_.entries
  uint64_t log_end_ = 0;
  log_recovery recovery_;
  bool failed_ = false;
};

} // namespace capstan::raft
