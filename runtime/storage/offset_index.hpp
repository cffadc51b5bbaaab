#pragma once

// The sparse offset index of one segment (NNNNNNNNNNNNNNNNNNNN.index, docs/storage.md): 8-byte
// entries, the base offset of a batch relative to the segment base (uint32 big-endian) and the
// batch's position in the .log (uint32 big-endian), both strictly increasing.
//
// The whole index lives in memory for binary search. Appended entries reach the file in
// buffered writes (every `write_batch` entries, and on write_pending/sync), so after a crash
// the file may lag the log; segment::open repairs that from the log.
// Plain and single-threaded, like the segment that owns it.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include "runtime/result.hpp"
#include "runtime/storage/file_handle.hpp"
#include "runtime/storage/index_file.hpp"
#include "runtime/types.hpp"

namespace capstan {

struct offset_index_entry {
  uint32_t relative_offset = 0;
  uint32_t position = 0;
  bool operator==(const offset_index_entry&) const = default;
};

class offset_index {
public:
  static constexpr size_t entry_size = 8;
  static constexpr size_t write_batch = 64;

  // Decodes index file content. CORRUPT_MESSAGE (saying what is wrong) unless: the size is a
  // multiple of entry_size, both fields strictly increase, and every position is a multiple of
  // 8 and below log_size.
  static result<std::vector<offset_index_entry>> decode(bytes_view bytes, uint64_t log_size);
  static void encode(const offset_index_entry& entry, uint8_t* out);

  // Opens the index over `path`, which need not exist: the first entry written creates it, and
  // a missing file loads as an empty index. The in-memory index starts empty: load() or reset()
  // next.
  static result<offset_index> open(const std::filesystem::path& path);

  offset_index(offset_index&&) = default;
  offset_index& operator=(offset_index&&) = default;
  offset_index(const offset_index&) = delete;
  offset_index& operator=(const offset_index&) = delete;

  // Reads and decodes the file. On an error memory stays empty and the file is not touched
  // until the next write_pending(), which replaces its content.
  status load(uint64_t log_size);
  // Empties the index. The file keeps its old bytes until the next write_pending(), which
  // overwrites them and cuts what is left over: rewriting an index that did not change costs
  // no ftruncate (which on ext4 waits for writeback).
  void reset();

  // REQUIRES: both fields greater than last()'s.
  status append(const offset_index_entry& entry);
  // Keeps the first `count` entries, in memory and in the file.
  status truncate(size_t count);

  // The greatest entry with relative_offset <= `relative_offset`.
  std::optional<offset_index_entry> floor(uint32_t relative_offset) const;
  // Number of entries whose position is below `position`.
  size_t count_below_position(uint64_t position) const;

  // Writes buffered entries to the file and, after a reset(), cuts its stale tail (no fsync).
  status write_pending();
  // write_pending, then fsync.
  status sync();
  // Unlinks the file; the object must not be used afterwards except for destruction.
  status remove();

  const std::vector<offset_index_entry>& entries() const { return file_.entries(); }
  bool empty() const { return entries().empty(); }
  const offset_index_entry& last() const { return entries().back(); }
  const std::filesystem::path& path() const { return file_.path(); }

private:
  offset_index(std::filesystem::path path, bool exists) : file_(std::move(path), exists) {}

  index_file<offset_index, offset_index_entry> file_;
};

} // namespace capstan
