#pragma once

// A storage_env for tests that runs the plain system calls and records the path of every fsync and
// every write, in order, from any thread: what a test checks when durability depends on which
// files and directories were synced, and when.

#include <cstddef>
#include <filesystem>
#include <mutex>
#include <utility>
#include <vector>

#include "runtime/storage/storage_env.hpp"

namespace capstan::test {

class sync_recorder final : public storage_env {
public:
  int open(const std::filesystem::path& path, int flags, mode_t mode, int& fd) override;
  int pread(const std::filesystem::path& path, int fd, void* out, size_t size, off_t position,
            size_t& read) override;
  int map(const std::filesystem::path& path, int fd, size_t size, const void*& addr) override;
  int pwritev(const std::filesystem::path& path, int fd, const iovec* iov, int count,
              off_t position, size_t& written) override;
  int sync(const std::filesystem::path& path, int fd) override;
  // Recorded as an fsync of `path`.
  int sync_file_system(const std::filesystem::path& path, int fd) override;
  int truncate(const std::filesystem::path& path, int fd, off_t size) override;
  int rename(const std::filesystem::path& from, const std::filesystem::path& to) override;
  int remove(const std::filesystem::path& path) override;
  int make_directory(const std::filesystem::path& path, mode_t mode) override;
  int remove_directory(const std::filesystem::path& path) override;

  // Every path fsynced so far, in order.
  std::vector<std::filesystem::path> synced() const;
  // How many times `path` was fsynced.
  size_t syncs_of(const std::filesystem::path& path) const;
  // Where in the order of fsyncs and writes the first `op` (sync or write) of `path` came; npos
  // if none did.
  size_t first(storage_op op, const std::filesystem::path& path) const;

private:
  void record(storage_op op, const std::filesystem::path& path);

  mutable std::mutex mutex_;
  std::vector<std::pair<storage_op, std::filesystem::path>> events_; // syncs and writes, in order
};

} // namespace capstan::test
