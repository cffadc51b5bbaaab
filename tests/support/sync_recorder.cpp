#include "tests/support/sync_recorder.hpp"

#include <algorithm>

namespace capstan::test {

int sync_recorder::open(const std::filesystem::path& path, int flags, mode_t mode, int& fd) {
  return posix().open(path, flags, mode, fd);
}

int sync_recorder::pread(const std::filesystem::path& path, int fd, void* out, size_t size,
                         off_t position, size_t& read) {
  return posix().pread(path, fd, out, size, position, read);
}

int sync_recorder::map(const std::filesystem::path& path, int fd, size_t size, const void*& addr) {
  return posix().map(path, fd, size, addr);
}

int sync_recorder::pwritev(const std::filesystem::path& path, int fd, const iovec* iov, int count,
                           off_t position, size_t& written) {
  return posix().pwritev(path, fd, iov, count, position, written);
}

int sync_recorder::sync(const std::filesystem::path& path, int fd) {
  {
    std::lock_guard lock(mutex_);
    synced_.push_back(path);
  }
  return posix().sync(path, fd);
}

int sync_recorder::truncate(const std::filesystem::path& path, int fd, off_t size) {
  return posix().truncate(path, fd, size);
}

int sync_recorder::rename(const std::filesystem::path& from, const std::filesystem::path& to) {
  return posix().rename(from, to);
}

int sync_recorder::remove(const std::filesystem::path& path) { return posix().remove(path); }

int sync_recorder::make_directory(const std::filesystem::path& path, mode_t mode) {
  return posix().make_directory(path, mode);
}

int sync_recorder::remove_directory(const std::filesystem::path& path) {
  return posix().remove_directory(path);
}

std::vector<std::filesystem::path> sync_recorder::synced() const {
  std::lock_guard lock(mutex_);
  return synced_;
}

size_t sync_recorder::syncs_of(const std::filesystem::path& path) const {
  std::lock_guard lock(mutex_);
  return static_cast<size_t>(std::count(synced_.begin(), synced_.end(), path));
}

} // namespace capstan::test
