#include "runtime/storage/file_handle.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <system_error>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <fmt/format.h>

#include "runtime/storage/storage_env.hpp"

namespace capstan {

error storage_error(std::string_view op, const std::filesystem::path& path, int err) {
  return make_error(errc::kafka_storage_error,
                    fmt::format("{} {}: {}", op, path.string(),
                                std::error_code(err, std::generic_category()).message()));
}

result<file_handle> file_handle::open(const std::filesystem::path& path, file_mode mode) {
  int flags = O_RDWR | O_CLOEXEC;
  switch (mode) {
  case file_mode::create_new:
    flags |= O_CREAT | O_EXCL;
    break;
  case file_mode::create_or_truncate:
    flags |= O_CREAT | O_TRUNC;
    break;
  case file_mode::open_or_create:
    flags |= O_CREAT;
    break;
  case file_mode::open_existing:
    break;
  }
  int fd = -1;
  if (int err = storage_env::current().open(path, flags, 0644, fd)) return storage_error("open", path, err);
  return file_handle(fd, path);
}

file_handle::~file_handle() {
  if (fd_ >= 0) ::close(fd_);
}

file_handle::file_handle(file_handle&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

file_handle& file_handle::operator=(file_handle&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

result<uint64_t> file_handle::size() const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return storage_error("fstat", path_, errno);
  return static_cast<uint64_t>(st.st_size);
}

status file_handle::pwrite_all(bytes_view data, uint64_t position) {
  const bytes_view parts[] = {data};
  return pwritev_all(parts, position);
}

status file_handle::pwritev_all(std::span<const bytes_view> parts, uint64_t position) {
  std::vector<iovec> iov;
  iov.reserve(parts.size());
  for (auto p : parts)
    if (!p.empty()) iov.push_back({const_cast<uint8_t*>(p.data()), p.size()});
  size_t first = 0;
  while (first < iov.size()) {
    const int count = static_cast<int>(std::min<size_t>(iov.size() - first, IOV_MAX));
    size_t n = 0;
    if (int err = storage_env::current().pwritev(path_, fd_, iov.data() + first, count,
                                                 static_cast<off_t>(position), n))
      return storage_error("pwrite", path_, err);
    if (n == 0) return storage_error("pwrite", path_, EIO);
    position += n;
    auto left = n;
    while (first < iov.size() && left >= iov[first].iov_len) left -= iov[first++].iov_len;
    if (left > 0) {
      iov[first].iov_base = static_cast<uint8_t*>(iov[first].iov_base) + left;
      iov[first].iov_len -= left;
    }
  }
  return {};
}

status file_handle::pread_all(std::span<uint8_t> out, uint64_t position) const {
  auto& env = storage_env::current();
  size_t done = 0;
  while (done < out.size()) {
    size_t n = 0;
    if (int err = env.pread(path_, fd_, out.data() + done, out.size() - done,
                            static_cast<off_t>(position + done), n))
      return storage_error("pread", path_, err);
    if (n == 0)
      return make_error(errc::kafka_storage_error,
                        fmt::format("pread {}: end of file at position {}, wanted {} more bytes",
                                    path_.string(), position + done, out.size() - done));
    done += n;
  }
  return {};
}

status file_handle::sync() {
  if (int err = storage_env::current().sync(path_, fd_)) return storage_error("fsync", path_, err);
  return {};
}

status file_handle::sync_file_system() {
  if (int err = storage_env::current().sync_file_system(path_, fd_))
    return storage_error("syncfs", path_, err);
  return {};
}

status file_handle::truncate(uint64_t size) {
  if (int err = storage_env::current().truncate(path_, fd_, static_cast<off_t>(size)))
    return storage_error("ftruncate", path_, err);
  return {};
}

status file_handle::close() {
  if (fd_ < 0) return {};
  const int fd = std::exchange(fd_, -1);
  // Linux releases the descriptor even when close fails, so it is never retried.
  if (::close(fd) != 0 && errno != EINTR) return storage_error("close", path_, errno);
  return {};
}

status sync_directory(const std::filesystem::path& dir) {
  auto& env = storage_env::current();
  int fd = -1;
  if (int err = env.open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0, fd))
    return storage_error("open directory", dir, err);
  status s;
  if (int err = env.sync(dir, fd)) s = storage_error("fsync directory", dir, err);
  ::close(fd);
  return s;
}

status sync_parent_directory(const std::filesystem::path& entry) {
  return sync_directory(entry.parent_path().empty() ? std::filesystem::path(".") : entry.parent_path());
}

status rename_file(const std::filesystem::path& from, const std::filesystem::path& to) {
  if (int err = storage_env::current().rename(from, to))
    return storage_error(fmt::format("rename to {}", to.string()), from, err);
  return {};
}

status remove_file(const std::filesystem::path& path) {
  if (int err = storage_env::current().remove(path); err != 0 && err != ENOENT)
    return storage_error("unlink", path, err);
  return {};
}

result<bool> file_exists(const std::filesystem::path& path) {
  std::error_code ec;
  const auto st = std::filesystem::symlink_status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) return storage_error("stat", path, ec.value());
  return std::filesystem::exists(st);
}

status make_directories(const std::filesystem::path& dir) {
  std::error_code ec;
  if (dir.empty() || std::filesystem::is_directory(dir, ec)) return {};
  if (auto parent = dir.parent_path(); parent != dir)
    if (auto s = make_directories(parent); !s) return s;
  const int err = storage_env::current().make_directory(dir, 0755);
  // EEXIST: another thread made it meanwhile, or a trailing '/' named the parent just made.
  if (err == 0 || (err == EEXIST && std::filesystem::is_directory(dir, ec))) return {};
  return storage_error("mkdir", dir, err);
}

status remove_tree(const std::filesystem::path& path) {
  std::error_code ec;
  const auto st = std::filesystem::symlink_status(path, ec);
  if (st.type() == std::filesystem::file_type::not_found) return {};
  if (ec) return storage_error("stat", path, ec.value());
  if (!std::filesystem::is_directory(st)) return remove_file(path);
  std::vector<std::filesystem::path> entries;
  for (std::filesystem::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec))
    entries.push_back(it->path());
  if (ec) return storage_error("read directory", path, ec.value());
  for (const auto& e : entries)
    if (auto s = remove_tree(e); !s) return s;
  if (int err = storage_env::current().remove_directory(path); err != 0 && err != ENOENT)
    return storage_error("rmdir", path, err);
  return {};
}

status write_file_atomically(const std::filesystem::path& file, std::string_view text, sync_mode mode) {
  auto tmp = file;
  tmp += ".tmp";
  {
    auto out = file_handle::open(tmp, file_mode::create_or_truncate);
    if (!out) return out.err();
    auto data = bytes_view(reinterpret_cast<const uint8_t*>(text.data()), text.size());
    if (auto s = out->pwrite_all(data, 0); !s) return s;
    if (mode == sync_mode::synced)
      if (auto s = out->sync(); !s) return s;
    if (auto s = out->close(); !s) return s;
  }
  if (auto s = rename_file(tmp, file); !s) return s;
  if (mode == sync_mode::unsynced) return {};
  return sync_parent_directory(file);
}

} // namespace capstan
