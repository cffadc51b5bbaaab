#include "tests/support/sync_recorder.hpp"

#include <algorithm>
#include <string>

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
  record(storage_op::write, path);
  return posix().pwritev(path, fd, iov, count, position, written);
}

void sync_recorder::record(storage_op op, const std::filesystem::path& path) {
  std::lock_guard lock(mutex_);
  events_.emplace_back(op, path);
}

int sync_recorder::sync(const std::filesystem::path& path, int fd) {
  record(storage_op::sync, path);
  return posix().sync(path, fd);
}

int sync_recorder::sync_file_system(const std::filesystem::path& path, int fd) {
  record(storage_op::sync, path);
  return posix().sync_file_system(path, fd);
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
  std::vector<std::filesystem::path> out;
  for (const auto& [op, path] : events_)
    if (op == storage_op::sync) out.push_back(path);
  return out;
}

size_t sync_recorder::syncs_of(const std::filesystem::path& path) const {
  const auto all = synced();
  return static_cast<size_t>(std::count(all.begin(), all.end(), path));
}

size_t sync_recorder::first(storage_op op, const std::filesystem::path& path) const {
  std::lock_guard lock(mutex_);
  for (size_t i = 0; i < events_.size(); ++i)
    if (events_[i].first == op && events_[i].second == path) return i;
  return std::string::npos;
}

} // namespace capstan::test
