#pragma once

// An owned file descriptor with whole-buffer positional I/O. Every failure is a value:
// KAFKA_STORAGE_ERROR with the operation, the path and the errno text. Short reads and writes
// are retried until done (or EOF, which is an error for pread_all). Opening, reads, writes, fsync
// and truncation here, and the directory fsync, rename and unlink below, go through
// storage_env::current() (runtime/storage/storage_env.hpp), so tests can break them.

#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>

#include "runtime/result.hpp"
#include "runtime/types.hpp"

namespace capstan {

enum class file_mode {
  create_new,         // O_CREAT | O_EXCL: an existing file is an error
  create_or_truncate, // O_CREAT | O_TRUNC
  open_or_create,     // O_CREAT, keeps content
  open_existing,      // a missing file is an error
};

class file_handle {
public:
  // Opens read-write, close-on-exec.
  static result<file_handle> open(const std::filesystem::path& path, file_mode mode);

  file_handle() = default;
  ~file_handle();
  file_handle(const file_handle&) = delete;
  file_handle& operator=(const file_handle&) = delete;
  file_handle(file_handle&& other) noexcept;
  file_handle& operator=(file_handle&& other) noexcept;

  bool is_open() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  const std::filesystem::path& path() const { return path_; }

  result<uint64_t> size() const;
  // Writes all of `data` at `position`.
  status pwrite_all(bytes_view data, uint64_t position);
  // Writes the parts back to back starting at `position` (one pwritev when the kernel takes it).
  status pwritev_all(std::span<const bytes_view> parts, uint64_t position);
  // Fills all of `out` from `position`; reaching end of file first is an error.
  status pread_all(std::span<uint8_t> out, uint64_t position) const;
  status sync();
  // syncfs(2) of the filesystem the file is on.
  status sync_file_system();
  status truncate(uint64_t size);
  // Closes now, reporting the close error; the destructor closes silently.
  status close();

private:
  file_handle(int fd, std::filesystem::path path) : fd_(fd), path_(std::move(path)) {}

  int fd_ = -1;
  std::filesystem::path path_;
};

// KAFKA_STORAGE_ERROR "<op> <path>: <strerror(err)>".
error storage_error(std::string_view op, const std::filesystem::path& path, int err);

// fsync of a directory: makes creations, renames and unlinks in it durable.
status sync_directory(const std::filesystem::path& dir);
// fsync of the directory that holds `entry` (the working directory for a bare name): makes
// `entry`'s name there durable.
status sync_parent_directory(const std::filesystem::path& entry);
// rename(2): atomically replaces `to`.
status rename_file(const std::filesystem::path& from, const std::filesystem::path& to);
// unlink(2); a file that is already gone is not an error.
status remove_file(const std::filesystem::path& path);
// Whether `path` names something (stat(2) without following a symbolic link); an error other
// than "not there" is KAFKA_STORAGE_ERROR.
result<bool> file_exists(const std::filesystem::path& path);
// mkdir -p: each missing directory of `dir`, outermost first (mode 0755); one that is already
// there is not an error.
status make_directories(const std::filesystem::path& dir);
// rm -r: a file, or a directory and everything under it, deepest first (files unlinked,
// directories rmdir'd, symbolic links removed and never followed); a path that is not there is
// not an error. Stops at the first failure, leaving the rest.
status remove_tree(const std::filesystem::path& path);
// Whether a write must be on disk before it returns, or may stay in the page cache.
enum class sync_mode { synced, unsynced };

// Replaces `file` by `text` atomically: writes `file`.tmp, fsyncs it, renames it over `file` and
// fsyncs the directory, so a crash leaves the old or the new content, never a mix. Unsynced,
// neither fsync runs: for content that the next start-up derives again from what else is on disk
// (a power loss may then leave the old content, or an empty file).
status write_file_atomically(const std::filesystem::path& file, std::string_view text,
                             sync_mode mode = sync_mode::synced);

} // namespace capstan
