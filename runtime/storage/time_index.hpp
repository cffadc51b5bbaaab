#pragma once

// The sparse time index of one segment (NNNNNNNNNNNNNNNNNNNN.timeindex, docs/storage.md):
// 12-byte entries, a timestamp (int64 big-endian) and an offset relative to the segment base
// (uint32 big-endian), both strictly increasing. Entry (t, r) promises: t is the largest batch
// max timestamp among the batches up to the one whose base offset is base + r, and every batch
// before that one has a max timestamp below t. So a search for the first record with timestamp
// >= target may start at the batch of the greatest entry with t <= target.
//
// Held in memory, written to the file in buffered writes, exactly like offset_index.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include "runtime/result.hpp"
#include "runtime/storage/file_handle.hpp"
#include "runtime/storage/index_file.hpp"
#include "runtime/types.hpp"

namespace capstan {

struct time_index_entry {
  timestamp_ms timestamp = no_timestamp;
  uint32_t relative_offset = 0;
  bool operator==(const time_index_entry&) const = default;
};

class time_index {
public:
  static constexpr size_t entry_size = 12;
  static constexpr size_t write_batch = 64;

  // Decodes index file content. CORRUPT_MESSAGE (saying what is wrong) unless the size is a
  // multiple of entry_size and both fields strictly increase.
  static result<std::vector<time_index_entry>> decode(bytes_view bytes);
  static void encode(const time_index_entry& entry, uint8_t* out);

  // Opens the index over `path`, which need not exist: the first entry written creates it, and
  // a missing file loads as an empty index. The in-memory index starts empty: load() or reset()
  // next.
  static result<time_index> open(const std::filesystem::path& path);

  time_index(time_index&&) = default;
  time_index& operator=(time_index&&) = default;
  time_index(const time_index&) = delete;
  time_index& operator=(const time_index&) = delete;

  // Reads and decodes the file. On an error memory stays empty and the file is not touched
  // until the next write_pending(), which replaces its content.
  status load();
  // Empties the index. The file keeps its old bytes until the next write_pending(), which
  // overwrites them and cuts what is left over: rewriting an index that did not change costs
  // no ftruncate (which on ext4 waits for writeback).
  void reset();

  // Appends iff the entry is greater than last() in both fields (and its timestamp is not
  // no_timestamp); otherwise does nothing.
  status maybe_append(const time_index_entry& entry);
  // Keeps the first `count` entries, in memory and in the file.
  status truncate(size_t count);

  // The greatest entry with timestamp <= `timestamp`.
  std::optional<time_index_entry> floor(timestamp_ms timestamp) const;
  // Number of entries whose relative offset is below `relative_offset`.
  size_t count_below_offset(uint32_t relative_offset) const;

  // Writes buffered entries to the file and, after a reset(), cuts its stale tail (no fsync).
  status write_pending();
  // write_pending, then fsync.
  status sync();
  // Unlinks the file; the object must not be used afterwards except for destruction.
  status remove();

  const std::vector<time_index_entry>& entries() const { return file_.entries(); }
  bool empty() const { return entries().empty(); }
  const time_index_entry& last() const { return entries().back(); }
  const std::filesystem::path& path() const { return file_.path(); }

private:
  time_index(std::filesystem::path path, bool exists) : file_(std::move(path), exists) {}

  index_file<time_index, time_index_entry> file_;
};

} // namespace capstan
