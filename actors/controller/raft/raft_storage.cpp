#include "actors/controller/raft/raft_storage.hpp"

#include <cerrno>
#include <system_error>
#include <utility>

#include "actors/controller/raft/raft_storage_format.hpp"
#include "runtime/batch/crc32c.hpp"
#include "runtime/storage/file_handle.hpp"

namespace capstan::raft {

namespace fs = std::filesystem;
namespace sf = storage_format;

namespace {

void put32(bytes& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put64(bytes& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
uint32_t get32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
uint64_t get64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// Fills the CRC field (bytes 0-3) of a record that starts at `start`.
void seal(bytes& out, size_t start) {
  const uint32_t crc = crc32c(bytes_view(out).subspan(start + 4));
  for (int i = 0; i < 4; ++i) out[start + i] = static_cast<uint8_t>(crc >> (8 * i));
}

bool crc_ok(bytes_view record) {
  return record.size() >= 4 && get32(record.data()) == crc32c(record.subspan(4));
}

void put_frame(bytes& out, const entry& e) {
  const size_t start = out.size();
  put32(out, 0);
  put32(out, static_cast<uint32_t>(e.data.size()));
  put64(out, e.term.value());
  put64(out, e.index.value());
  out.insert(out.end(), e.data.begin(), e.data.end());
  seal(out, start);
}

error damaged(const fs::path& file, const std::string& what) {
  return make_error(errc::kafka_storage_error, file.string() + ": " + what);
}

result<bytes> read_whole(const fs::path& file) {
  auto fh = file_handle::open(file, file_mode::open_existing);
  if (!fh) return fh.err();
  auto size = fh->size();
  if (!size) return size.err();
  bytes content(*size);
  if (auto s = fh->pread_all(content, 0); !s) return s.err();
  return content;
}

// Write, fsync, rename over `file`, fsync the directory: readers see the old or the new file.
status replace_file(const fs::path& file, bytes_view content) {
  fs::path tmp = file;
  tmp += std::string(sf::temp_suffix);
  auto fh = file_handle::open(tmp, file_mode::create_or_truncate);
  if (!fh) return fh.err();
  if (auto s = fh->pwrite_all(content, 0); !s) return s;
  if (auto s = fh->sync(); !s) return s;
  if (auto s = fh->close(); !s) return s;
  if (auto s = rename_file(tmp, file); !s) return s;
  return sync_directory(file.parent_path());
}

result<hard_state> read_hard_state(const fs::path& file) {
  if (!fs::exists(file)) return hard_state{};
  auto content = read_whole(file);
  if (!content) return content.err();
  const bytes& b = *content;
  if (b.size() != sf::hard_state_size)
    return damaged(file, "wrong size " + std::to_string(b.size()));
  if (!crc_ok(b)) return damaged(file, "crc mismatch");
  if (get32(b.data() + 4) != sf::version) return damaged(file, "unknown version");
  hard_state hs;
  hs.term = raft_term{get64(b.data() + 8)};
  const auto vote = static_cast<int32_t>(get32(b.data() + 16));
  if (vote != sf::no_vote) hs.voted_for = node_id{vote};
  return hs;
}

result<snapshot> read_snapshot(const fs::path& file) {
  if (!fs::exists(file)) return snapshot{};
  auto content = read_whole(file);
  if (!content) return content.err();
  const bytes& b = *content;
  if (b.size() < sf::snapshot_header_size) return damaged(file, "shorter than its header");
  if (!crc_ok(b)) return damaged(file, "crc mismatch");
  if (get32(b.data() + 4) != sf::version) return damaged(file, "unknown version");
  if (get64(b.data() + 24) != b.size() - sf::snapshot_header_size)
    return damaged(file, "data length does not match the file");
  snapshot s;
  s.meta = snapshot_meta{log_index{get64(b.data() + 8)}, raft_term{get64(b.data() + 16)}};
  s.data.assign(b.begin() + sf::snapshot_header_size, b.end());
  return s;
}

} // namespace

result<raft_storage> raft_storage::open(const fs::path& dir) {
  if (auto made = make_directories(dir); !made) return made.err();
  for (auto name : {sf::hard_state_file, sf::snapshot_file, sf::log_file}) {
    fs::path tmp = dir / name;
    tmp += std::string(sf::temp_suffix);
    if (auto s = remove_file(tmp); !s) return s.err();
  }
  auto hs = read_hard_state(dir / sf::hard_state_file);
  if (!hs) return hs.err();
  auto snap = read_snapshot(dir / sf::snapshot_file);
  if (!snap) return snap.err();
  auto log = file_handle::open(dir / sf::log_file, file_mode::open_or_create);
  if (!log) return log.err();

  raft_storage st(dir, std::move(*log));
  st.state_.hard = std::move(*hs);
  st.state_.snap = std::move(*snap);
  if (auto s = st.recover_log(); !s) return s.err();
  const raft_term last_term =
      st.state_.entries.empty() ? st.state_.snap.meta.term : st.state_.entries.back().term;
  if (last_term > st.state_.hard.term)
    return damaged(dir, "log reaches term " + std::to_string(last_term.value()) +
                            " beyond the hard state's " +
                            std::to_string(st.state_.hard.term.value()));
  return st;
}

status raft_storage::recover_log() {
  auto size = log_.size();
  if (!size) return size.err();
  bytes content(*size);
  if (auto s = log_.pread_all(content, 0); !s) return s;

  const log_index snap_index = state_.snap.meta.index;
  uint64_t pos = 0;
  uint64_t prev_index = 0;
  uint64_t prev_term = 0;
  std::string reason;
  while (pos < content.size()) {
    const uint64_t left = content.size() - pos;
    if (left < sf::frame_header_size) {
      reason = "torn frame header";
      break;
    }
    const uint8_t* h = content.data() + pos;
    const uint32_t length = get32(h + 4);
    const uint64_t term = get64(h + 8);
    const uint64_t index = get64(h + 16);
    if (length > sf::max_entry_bytes || left - sf::frame_header_size < length) {
      reason = "torn or oversized frame";
      break;
    }
    if (!crc_ok(bytes_view(content).subspan(pos, sf::frame_header_size + length))) {
      reason = "crc mismatch";
      break;
    }
    if (term == 0 || index == 0 || (prev_index != 0 && index != prev_index + 1) ||
        term < prev_term) {
      reason = "frame out of order";
      break;
    }
    if (log_index{index} > snap_index) {
      if (log_index{index} != state_.last_index() + 1)
        return damaged(log_.path(), "entry " + std::to_string(index) + " leaves a gap after " +
                                        std::to_string(state_.last_index().value()));
      state_.entries.push_back(
          entry{raft_term{term}, log_index{index},
                bytes(h + sf::frame_header_size, h + sf::frame_header_size + length)});
      positions_.push_back(pos);
    }
    prev_index = index;
    prev_term = term;
    pos += sf::frame_header_size + length;
  }
  recovery_ = log_recovery{pos, content.size() - pos, reason};
  log_end_ = pos;
  if (pos < content.size()) {
    if (auto s = log_.truncate(pos); !s) return s;
    if (auto s = log_.sync(); !s) return s;
  }
  return {};
}

status raft_storage::check_usable() const {
  if (failed_)
    return make_error(errc::kafka_storage_error,
                      "raft storage in " + dir_.string() + " failed earlier");
  return {};
}

status raft_storage::fail(status s) {
  if (!s) failed_ = true;
  return s;
}

status raft_storage::save_hard_state(const hard_state& hs) {
  if (auto s = check_usable(); !s) return s;
  bytes b;
  put32(b, 0);
  put32(b, sf::version);
  put64(b, hs.term.value());
  put32(b, static_cast<uint32_t>(hs.voted_for ? hs.voted_for->value() : sf::no_vote));
  put32(b, 0);
  seal(b, 0);
  if (auto s = fail(replace_file(dir_ / sf::hard_state_file, b)); !s) return s;
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
  if (auto s = fail(log_.truncate(pos)); !s) return s;
  if (auto s = fail(log_.sync()); !s) return s;
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
  bytes b;
  put32(b, 0);
  put32(b, sf::version);
  put64(b, snap.meta.index.value());
  put64(b, snap.meta.term.value());
  put64(b, snap.data.size());
  b.insert(b.end(), snap.data.begin(), snap.data.end());
  seal(b, 0);
  if (auto s = fail(replace_file(dir_ / sf::snapshot_file, b)); !s) return s;
  state_.save_snapshot(snap);
  return fail(rewrite_log());
}

// The log without the prefix the snapshot covers, replaced atomically. Metadata logs are small
// after a snapshot, so rewriting beats keeping a start offset in a header.
status raft_storage::rewrite_log() {
  bytes b;
  std::vector<uint64_t> positions;
  for (const auto& e : state_.entries) {
    positions.push_back(b.size());
    put_frame(b, e);
  }
  const fs::path file = dir_ / sf::log_file;
  if (auto s = replace_file(file, b); !s) return s;
  auto fh = file_handle::open(file, file_mode::open_existing);
  if (!fh) return fh.err();
  log_ = std::move(*fh);
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
    put_frame(b, e);
    ++expected;
  }
  if (auto s = fail(log_.pwrite_all(b, log_end_)); !s) return s;
  if (auto s = fail(log_.sync()); !s) return s;
  state_.append(entries);
  positions_.insert(positions_.end(), positions.begin(), positions.end());
  log_end_ += b.size();
  return {};
}

} // namespace capstan::raft
