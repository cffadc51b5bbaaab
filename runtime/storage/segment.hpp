#pragma once

// One log segment on disk: NNNNNNNNNNNNNNNNNNNN.log (padded batches), .index (sparse relative
// offset -> position) and .timeindex (max timestamp -> relative offset); docs/storage.md has the
// byte layouts, the recovery rules and what is durable when.
// Plain, synchronous, single-threaded: its partition log's I/O worker (actors/log/io_worker_actor)
// is the only caller. Slices it hands out may be used from any thread.

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "runtime/result.hpp"
#include "runtime/storage/log_slice.hpp"
#include "runtime/types.hpp"

namespace capstan {

class file_handle;

struct segment_options {
  size_t index_interval_bytes = 4096;
  size_t max_batch_bytes = 1048588;
};

// What open() found and did; logged by the caller.
struct segment_recovery {
  size_t valid_bytes = 0;     // size of the log file after recovery
  size_t truncated_bytes = 0; // bytes cut off a torn or corrupt tail
  offset truncated_at{0};     // first offset that was cut (when truncated_bytes > 0)
  std::string reason;         // why the tail was cut
  bool index_rebuilt = false;
};

enum class segment_open_mode {
  create,       // a new, empty segment; an existing file is an error
  open_trusted, // below the recovery point: keep the data, check index sanity, rebuild if bad
  open_recover, // after the recovery point: re-validate every batch, cut a bad tail, rebuild
                // indexes
};

class segment {
public:
  // Every mode opens the segment active; seal() the ones that are not the last of their log.
  // open_trusted scans batch headers only from the last index entries on (the whole log when
  // an index is missing or damaged); a trusted log that is not a well-framed batch sequence is
  // CORRUPT_MESSAGE: open it with open_recover instead. open_recover never fails on file
  // content: it keeps the longest valid prefix (recovery() says what was cut and why).
  static result<std::unique_ptr<segment>> open(const std::filesystem::path& dir, offset base,
                                               segment_open_mode mode,
                                               const segment_options& options);
  ~segment();
  segment(const segment&) = delete;
  segment& operator=(const segment&) = delete;

  // 20-digit zero-padded file stem, e.g. "00000000000000000042".
  static std::string file_stem(offset base);

  // Appends one batch (already validated, offsets assigned) at the aligned end of the file,
  // padding first. Updates the indexes. No fsync.
  // REQUIRES: !sealed(), batch.base_offset() >= next_offset(), can_hold(last offset, size).
  // Only the framing is checked here (not the CRC): a violated precondition is an error value
  // (INVALID_RECORD, MESSAGE_TOO_LARGE, KAFKA_STORAGE_ERROR), never a crash. When the log write
  // fails the segment's state is unchanged (the file may hold garbage past size_bytes(), which
  // the next append overwrites and recovery cuts). When only a buffered index write fails, the
  // batch is appended (next_offset() moved) and KAFKA_STORAGE_ERROR is still returned: as in
  // Kafka, a storage error takes the log directory offline; the index is repaired on open.
  status append(bytes_view batch);

  // Whether a batch ending at `last_offset` with `batch_bytes` bytes still fits: the index
  // stores offsets relative to the base and positions as uint32, so a segment stops at 4 GiB
  // and 2^32 offsets. The caller rolls a new segment when this is false.
  bool can_hold(offset last_offset, size_t batch_bytes) const;

  // Whole batches from the first one whose last offset >= `from`, up to max_bytes; always at
  // least one batch if any is there (so a batch larger than max_bytes still makes progress).
  // The slice may start before `from` (a batch is never split): first_offset is the first
  // batch's base offset. The padding between batches is included, so the slice is a padded
  // sequence (batch_sequence_reader). Sealed segments answer from an mmap; the active one (and a
  // sealed one the storage env would not map) with one pread buffer. An empty slice
  // (first_offset = next_offset = from) when `from` >= next_offset(). A failed read is
  // KAFKA_STORAGE_ERROR; batch headers that do not frame are CORRUPT_MESSAGE.
  result<log_slice> read(offset from, size_t max_bytes) const;

  // Offset of the first record whose timestamp >= target (Kafka's ListOffsets by time), or
  // nullopt when the segment has none. A failed read is KAFKA_STORAGE_ERROR; a batch that fails
  // validation here is logged and also answers nullopt.
  result<std::optional<offset>> offset_for_timestamp(timestamp_ms target) const;

  // Drops every batch that holds an offset >= `to` (last offset >= to), keeping the batches
  // wholly below it. Truncation happens at batch boundaries and a batch that straddles `to`
  // (base < to <= last) is dropped whole, as Kafka's LogSegment.truncateTo does: afterwards
  // next_offset() <= to, and a follower never keeps records at or past a divergence point.
  // A sealed segment is rewritten to a new file and renamed over the old one, so live mmap
  // slices keep reading the old inode (never SIGBUS); the segment is then active again. No fsync
  // of the log beyond what the sealed rewrite needs.
  status truncate_to(offset to);

  // fsync of log and indexes (and, once after create, of the directory).
  status flush();
  // syncfs(2) of the filesystem the segment is on, through the log file's open descriptor: makes
  // everything written there durable without opening a file.
  status sync_file_system();
  // Writes buffered index entries and makes the segment read-only (reads then come from an
  // mmap, or with pread when the storage env will not map the file). No fsync: call flush()
  // for that.
  status seal();
  // Removes the three files. The object must not be used afterwards except for destruction.
  status remove();

  offset base_offset() const { return base_; }
  // One past the last offset in the segment (base when empty).
  offset next_offset() const { return next_; }
  size_t size_bytes() const { return size_; }
  // Largest batch max timestamp in the segment, no_timestamp when empty.
  timestamp_ms max_timestamp() const { return max_timestamp_; }
  bool sealed() const { return sealed_; }
  const segment_recovery& recovery() const { return recovery_; }

private:
  struct impl;
  segment(offset base, std::unique_ptr<impl> impl);

  status load_trusted();
  status recover();
  // Re-scans batch headers from the last index entries to the end of the log, adding missing
  // index entries and setting next_ and max_timestamp_.
  status replay_tail();
  status rebuild_indexes();
  status scan_headers(uint64_t start, std::optional<offset> base_at_start);
  // Sealed truncation: writes [0, size) of the log to a temp file, fsyncs it, renames it
  // over the .log and makes it the active file. The caller syncs the directory.
  status rewrite_prefix(uint64_t size);
  // Writes the first `size` bytes of the log to `to`, from the mapping or by pread.
  status copy_prefix(file_handle& to, uint64_t size) const;

  offset base_;
  offset next_;
  size_t size_ = 0;
  timestamp_ms max_timestamp_ = no_timestamp;
  bool sealed_ = false;
  segment_recovery recovery_;
  std::unique_ptr<impl> impl_;
};

} // namespace capstan
