#pragma once

// The files of one controller's Raft directory, as raft_storage reads and changes them
// (docs/controller.md, "On disk"): whole-file reads, atomic replacement, and positional writes
// and truncation of the log. Every change returns once it is durable. LevelDB's Env idea cut to
// one directory: open_raft_directory keeps the files on disk (through file_handle, so storage_env
// faults reach them); the controller simulation keeps them in memory to tear, lose and damage them
// on purpose (tests/unit/controller/memory_raft_files.hpp).
//
// Synchronous: an I/O worker calls it, never a CAF scheduler thread. Not thread-safe.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/result.hpp"
#include "runtime/types.hpp"

namespace capstan::raft {

class raft_files {
public:
  raft_files() = default;
  virtual ~raft_files() = default;
  raft_files(const raft_files&) = delete;
  raft_files& operator=(const raft_files&) = delete;

  // The whole file; nullopt when there is none.
  virtual result<std::optional<bytes>> read(std::string_view name) = 0;
  // Replaces (or creates) the file atomically: after a crash it holds the old or the new content.
  virtual status replace(std::string_view name, bytes_view content) = 0;
  // Writes `data` at `position`, creating the file if needed. Until it returns, a crash may leave
  // any part of `data` written or not.
  virtual status write(std::string_view name, uint64_t position, bytes_view data) = 0;
  // Cuts the file to `size` bytes.
  virtual status truncate(std::string_view name, uint64_t size) = 0;
  // Removes the file; one that is not there is not an error.
  virtual status remove(std::string_view name) = 0;
  // Where the files are, for errors and log lines.
  virtual std::string where() const = 0;
};

// The files in directory `dir` on disk, created if needed. Leftover temporary files of a
// replacement a crash cut short are removed.
result<std::unique_ptr<raft_files>> open_raft_directory(const std::filesystem::path& dir);

} // namespace capstan::raft
