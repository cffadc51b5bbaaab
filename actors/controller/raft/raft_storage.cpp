#include "actors/controller/raft/raft_storage.hpp"

#include <utility>

#include "actors/controller/metadata/metadata_types.hpp"
#include "actors/controller/raft/raft_log_scan.hpp"
#include "actors/controller/raft/raft_storage_format.hpp"

namespace capstan::raft {

namespace fs = std::filesystem;
namespace sf = storage_format;

result<raft_storage> raft_storage::open(const fs::path& dir, const directory_identity& opener) {
  auto files = open_raft_directory(dir);
  if (!files) return files.err();
  return open(std::move(*files), opener);
}

// Reads and judges every file before it changes any: a directory found damaged is marked catching
// up with its new id first, so a crash while it is repaired finds it damaged, or marked, again.
result<raft_storage> raft_storage::open(std::unique_ptr<raft_files> files,
                                        const directory_identity& opener) {
  auto id_file = files->read(sf::identity_file);
  if (!id_file) return id_file.err();
  auto hs_file = files->read(sf::hard_state_file);
  if (!hs_file) return hs_file.err();
  auto snap_file = files->read(sf::snapshot_file);
  if (!snap_file) return snap_file.err();
  auto log_file = files->read(sf::log_file);
  if (!log_file) return log_file.err();
  const std::string where = files->where();

  raft_storage st(std::move(files));
  std::string lost;
  auto lose = [&](std::string_view file, const std::string& what) {
    lost += (lost.empty() ? "" : "; ") + std::string(file) + ": " + what;
  };
  const bytes no_log;
  const bytes& log = log_file->has_value() ? **log_file : no_log;
  // A directory is made with its identity, hard state and (empty) log: once one is there, any of
  // the others missing was lost.
  const bool is_new =
      !id_file->has_value() && !hs_file->has_value() && !snap_file->has_value() && log.empty();
  // Read as lost, an earlier version's directory would make its voter start over (a quorum of
  // them anew, without its metadata): it is refused instead.
  if (!id_file->has_value() && hs_file->has_value() && is_version_one_hard_state(**hs_file))
    return make_error(errc::kafka_storage_error,
                      "the Raft directory " + where +
                          " was written by an earlier capstan (hard state format version 1, no " +
                          std::string(sf::identity_file) +
                          "), which this version does not read; it is left as it is");
  if (!is_new && !log_file->has_value()) lose(sf::log_file, "missing");

  // An identity lost alone costs only the id: the hard state and log hold every promise.
  std::string identity_lost;
  if (id_file->has_value()) {
    auto id = decode_identity(**id_file);
    if (!id) {
      identity_lost = id.err().message;
    } else if (id->cluster_id != opener.cluster_id) {
      return make_error(errc::inconsistent_cluster_id, "the Raft directory " + where +
                                                           " is of cluster '" + id->cluster_id +
                                                           "', not '" + opener.cluster_id + "'");
    } else if (id->node != opener.node) {
      return make_error(errc::inconsistent_voter_set,
                        "the Raft directory " + where + " is node " +
                            std::to_string(id->node.value()) + "'s, not node " +
                            std::to_string(opener.node.value()) + "'s");
    } else if (id->voters != opener.voters) {
      return make_error(errc::inconsistent_voter_set,
                        "the Raft directory " + where + " is of a quorum of voters " +
                            controller::to_string(id->voters) + ", not " +
                            controller::to_string(opener.voters) +
                            " (voters cannot change: start it with the quorum it was made in)");
    } else {
      st.identity_ = *id;
    }
  } else if (!is_new) {
    identity_lost = "missing";
  }

  durable_state& state = st.state_;
  bool hard_known = false;
  if (hs_file->has_value()) {
    auto hs = decode_hard_state(**hs_file);
    if (hs) {
      state.hard = *hs;
      hard_known = true;
    } else {
      lose(sf::hard_state_file, hs.err().message);
    }
  } else if (!is_new) {
    lose(sf::hard_state_file, "missing");
  }

  // The entries after a snapshot that is lost cannot be applied: both go.
  bool drop_snapshot = false;
  if (snap_file->has_value()) {
    auto snap = decode_snapshot(**snap_file);
    if (snap) {
      state.snap = std::move(*snap);
    } else {
      lose(sf::snapshot_file, snap.err().message);
      drop_snapshot = true;
    }
  }

  uint64_t keep_bytes = 0;
  if (!drop_snapshot) {
    auto scan = scan_log(log, state.snap.meta.index);
    if (scan.damaged)
      lose(sf::log_file, scan.reason + " at byte " + std::to_string(scan.valid_bytes) +
                             ", which no torn last append explains");
    state.entries = std::move(scan.entries);
    st.positions_ = std::move(scan.positions);
    keep_bytes = scan.valid_bytes;
    st.recovery_.reason = std::move(scan.reason);
  }
  st.recovery_.valid_bytes = keep_bytes;
  st.recovery_.truncated_bytes = log.size() - keep_bytes;

  const raft_term last_term =
      state.entries.empty() ? state.snap.meta.term : state.entries.back().term;
  if (last_term > state.hard.term) {
    if (hard_known)
      lose(sf::hard_state_file, "term " + std::to_string(state.hard.term.value()) +
                                    " below the log's " + std::to_string(last_term.value()));
    state.hard = hard_state{last_term, std::nullopt, {}, true};
  }

  st.recovery_.created = is_new;
  st.recovery_.lost = lost;
  if (is_new || !lost.empty()) {
    if (auto s = st.make_catching_up(opener, drop_snapshot, keep_bytes); !s) return s.err();
  } else {
    if (!identity_lost.empty()) {
      st.recovery_.identity_lost = std::string(sf::identity_file) + ": " + identity_lost;
      if (auto s = st.take_identity(opener); !s) return s.err();
    }
    // A torn last append: nothing in it was acknowledged.
    if (keep_bytes < log.size())
      if (auto s = st.files_->truncate(sf::log_file, keep_bytes); !s) return s.err();
  }
  st.log_end_ = keep_bytes;
  // A log beside a snapshot that does not start at or below the snapshot index (a crash between
  // a snapshot and its rewrite, a log cut to nothing as damaged, a directory of an earlier
  // version) gets the snapshot's entry as its first frame now, as rewrite_log writes it: a
  // snapshot file lost later is then seen, and the first frame is never an append's.
  const bool based = keep_bytes > 0 && (st.positions_.empty() || st.positions_.front() > 0);
  if (state.snap.meta.index.value() > 0 && !based)
    if (auto s = st.rewrite_log(entry{state.snap.meta.term, state.snap.meta.index, {}}); !s)
      return s.err();
  return st;
}

status raft_storage::take_identity(const directory_identity& opener) {
  if (opener.directory == directory_id{})
    return make_error(errc::invalid_request,
                      "the Raft directory " + files_->where() + " needs a new directory id");
  identity_ = opener;
  return files_->replace(sf::identity_file, encode_identity(identity_));
}

status raft_storage::make_catching_up(const directory_identity& opener, bool drop_snapshot,
                                      uint64_t keep_bytes) {
  state_.hard.catching_up = true;
  if (auto s = take_identity(opener); !s) return s;
  if (auto s = files_->replace(sf::hard_state_file, encode_hard_state(state_.hard)); !s) return s;
  if (drop_snapshot) {
    if (auto s = files_->remove(sf::snapshot_file); !s) return s;
    state_.snap = snapshot{};
  }
  // Also makes the log of a new directory.
  return files_->truncate(sf::log_file, keep_bytes);
}

status raft_storage::check_usable() const {
  if (failed_)
    return make_error(errc::kafka_storage_error,
                      "raft storage in " + files_->where() + " failed earlier");
  return {};
}

status raft_storage::fail(status s) {
  if (!s) failed_ = true;
  return s;
}

status raft_storage::save_hard_state(const hard_state& hs) {
  if (auto s = check_usable(); !s) return s;
  if (auto s = fail(files_->replace(sf::hard_state_file, encode_hard_state(hs))); !s) return s;
  state_.hard = hs;
  return {};
}

status raft_storage::truncate_from(log_index i) {
  if (auto s = check_usable(); !s) return s;
  if (i <= state_.snap.meta.index)
    return make_error(errc::invalid_request,
                      "truncation at " + std::to_string(i.value()) + " reaches into the snapshot");
  if (i > state_.last_index()) return {};
  const uint64_t pos = positions_[i - (state_.snap.meta.index + 1)];
  if (auto s = fail(files_->truncate(sf::log_file, pos)); !s) return s;
  state_.truncate_from(i);
  positions_.resize(state_.entries.size());
  log_end_ = pos;
  return {};
}

status raft_storage::save_snapshot(const snapshot& snap) {
  if (auto s = check_usable(); !s) return s;
  if (snap.meta.index <= state_.snap.meta.index)
    return make_error(errc::invalid_request,
                      "snapshot at " + std::to_string(snap.meta.index.value()) +
                          " is not newer than " + std::to_string(state_.snap.meta.index.value()));
  if (auto s = fail(files_->replace(sf::snapshot_file, encode_snapshot(snap))); !s) return s;
  // The entry the snapshot ends at, as the log holds it, or (a snapshot from the leader past the
  // log) one of its index and term without data: index 1 is always the first leader's empty no-op.
  entry base{snap.meta.term, snap.meta.index, {}};
  if (snap.meta.index <= state_.last_index()) {
    const auto& e = state_.entries[snap.meta.index - (state_.snap.meta.index + 1)];
    if (e.term == snap.meta.term) base = e;
  }
  state_.save_snapshot(snap);
  return fail(rewrite_log(base));
}

// The log without the prefix the snapshot covers, replaced atomically. Metadata logs are small
// after a snapshot, so rewriting beats keeping a start offset in a header. It keeps the entry the
// snapshot ends at as its first frame (skipped on open, as at or below the snapshot): a snapshot
// file lost later then leaves a log that starts past index 1, which open reads as a gap, and
// never an empty log that a voter could be elected with while lacking every committed entry.
status raft_storage::rewrite_log(const entry& base) {
  bytes b;
  put_frame(b, base, base.index);
  std::vector<uint64_t> positions;
  for (const auto& e : state_.entries) {
    positions.push_back(b.size());
    put_frame(b, e, base.index);
  }
  if (auto s = files_->replace(sf::log_file, b); !s) return s;
  positions_ = std::move(positions);
  log_end_ = b.size();
  return {};
}

status raft_storage::append(std::span<const entry> entries) {
  if (auto s = check_usable(); !s) return s;
  if (entries.empty()) return {};
  bytes b;
  std::vector<uint64_t> positions;
  log_index expected = state_.last_index() + 1;
  for (const auto& e : entries) {
    if (e.index != expected)
      return make_error(errc::invalid_request, "append of entry " +
                                                   std::to_string(e.index.value()) + ", expected " +
                                                   std::to_string(expected.value()));
    if (e.data.size() > sf::max_entry_bytes)
      return make_error(errc::message_too_large,
                        "raft entry of " + std::to_string(e.data.size()) + " bytes");
    positions.push_back(log_end_ + b.size());
    put_frame(b, e, entries.front().index);
    ++expected;
  }
  if (auto s = fail(files_->write(sf::log_file, log_end_, b)); !s) return s;
  state_.append(entries);
  positions_.insert(positions_.end(), positions.begin(), positions.end());
  log_end_ += b.size();
  return {};
}

} // namespace capstan::raft
