#pragma once

// The file side shared by the offset and time indexes (docs/storage.md): the whole index in
// memory, new entries written to the file in batches, and a reset index rewritten over its old
// bytes with the stale tail cut on the next write (no ftruncate for an index that did not change).
// The file is opened for each write, truncate, sync or read and closed again, so an index holds
// no file descriptor between them: a partition costs one descriptor (its active segment's .log),
// not three. Kafka likewise closes an index's file once it is mapped. The file is created by the
// first write of an entry, not with its segment: a new partition, or one whose segments stay
// smaller than index.interval.bytes, has no index files (one inode allocation, and a file to
// look up and delete, fewer each; a missing index is an empty one, and open rebuilds what a
// lagging index lacks from the log). Every open after the file exists expects it there, so an
// index removed behind its back fails loudly instead of being recreated empty.
// `Index` supplies `entry_size`, `write_batch` and `static void encode(const Entry&, uint8_t*)`
// (used only in member bodies, so an index class may hold its own index_file); the index classes
// add decoding and their lookups on top.

#include <filesystem>
#include <utility>
#include <vector>

#include "runtime/result.hpp"
#include "runtime/storage/file_handle.hpp"
#include "runtime/types.hpp"

namespace capstan {

template <class Index, class Entry>
class index_file {
public:
  using entry_type = Entry;

  // `exists`: whether the file is on disk already; if not, the first write creates it.
  index_file(std::filesystem::path path, bool exists) : path_(std::move(path)), exists_(exists) {}
  index_file(index_file&&) = default;
  index_file& operator=(index_file&&) = default;
  index_file(const index_file&) = delete;
  index_file& operator=(const index_file&) = delete;

  // The file's current bytes, to decode.
  result<bytes> read_all() {
    if (!exists_) return bytes{};
    auto file = opened();
    if (!file) return file.err();
    auto size = file->size();
    if (!size) return size.err();
    bytes content(*size);
    if (auto s = file->pread_all(content, 0); !s) return s.err();
    return content;
  }
  // Takes decoded entries as exactly what the file holds.
  void loaded(std::vector<entry_type> entries) {
    entries_ = std::move(entries);
    written_ = entries_.size();
    stale_tail_ = false;
  }
  // Empties memory; the file's old bytes are replaced by the next write_pending().
  void reset() {
    entries_.clear();
    written_ = 0;
    stale_tail_ = exists_;
  }

  status append(const entry_type& entry) {
    entries_.push_back(entry);
    if (entries_.size() - written_ >= Index::write_batch) return write_buffered();
    return {};
  }
  // Keeps the first `count` entries, in memory and in the file.
  status truncate(size_t count) {
    if (count >= entries_.size()) return {};
    entries_.resize(count);
    if (written_ > count) {
      written_ = count;
      auto file = opened();
      if (!file) return file.err();
      return file->truncate(count * Index::entry_size);
    }
    return {};
  }

  status write_pending() {
    if (auto s = write_buffered(); !s) return s;
    if (!stale_tail_) return {};
    auto file = opened();
    if (!file) return file.err();
    auto size = file->size();
    if (!size) return size.err();
    if (*size > written_ * Index::entry_size)
      if (auto s = file->truncate(written_ * Index::entry_size); !s) return s;
    stale_tail_ = false;
    return {};
  }
  status sync() {
    if (auto s = write_pending(); !s) return s;
    if (!exists_) return {};
    // fsync through a new descriptor flushes what earlier ones wrote: it syncs the file.
    auto file = opened();
    if (!file) return file.err();
    return file->sync();
  }
  status remove() {
    auto s = remove_file(path_);
    if (s) exists_ = false;
    return s;
  }

  const std::vector<entry_type>& entries() const { return entries_; }
  const std::filesystem::path& path() const { return path_; }

private:
  status write_buffered() {
    if (written_ == entries_.size()) return {};
    bytes buffer((entries_.size() - written_) * Index::entry_size);
    for (size_t i = written_; i < entries_.size(); ++i)
      Index::encode(entries_[i], buffer.data() + (i - written_) * Index::entry_size);
    auto file = opened();
    if (!file) return file.err();
    if (auto s = file->pwrite_all(buffer, written_ * Index::entry_size); !s) return s;
    written_ = entries_.size();
    return {};
  }
  result<file_handle> opened() {
    if (exists_) return file_handle::open(path_, file_mode::open_existing);
    auto file = file_handle::open(path_, file_mode::open_or_create);
    if (file) exists_ = true;
    return file;
  }

  std::filesystem::path path_;
  bool exists_ = false;
  std::vector<entry_type> entries_;
  size_t written_ = 0;      // entries_[0, written_) are in the file
  bool stale_tail_ = false; // reset() left old bytes past written_ in the file
};

} // namespace capstan
