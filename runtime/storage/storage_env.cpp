#include "runtime/storage/storage_env.hpp"

#include <atomic>
#include <cerrno>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace capstan {

const char* to_string(storage_op op) {
  switch (op) {
  case storage_op::open:
    return "open";
  case storage_op::write:
    return "write";
  case storage_op::sync:
    return "sync";
  case storage_op::truncate:
    return "truncate";
  case storage_op::rename:
    return "rename";
  case storage_op::remove:
    return "remove";
  case storage_op::mkdir:
    return "mkdir";
  case storage_op::rmdir:
    return "rmdir";
  case storage_op::read:
    return "read";
  case storage_op::map:
    return "map";
  }
  return "?";
}

namespace {

class posix_env final : public storage_env {
public:
  int open(const std::filesystem::path& path, int flags, mode_t mode, int& fd) override {
    do {
      fd = ::open(path.c_str(), flags, mode);
    } while (fd < 0 && errno == EINTR);
    return fd < 0 ? errno : 0;
  }

  int pread(const std::filesystem::path&, int fd, void* out, size_t size, off_t position,
            size_t& read) override {
    ssize_t n;
    do {
      n = ::pread(fd, out, size, position);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return errno;
    read = static_cast<size_t>(n);
    return 0;
  }

  int map(const std::filesystem::path&, int fd, size_t size, const void*& addr) override {
    void* a = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    if (a == MAP_FAILED) return errno;
    addr = a;
    return 0;
  }

  int pwritev(const std::filesystem::path&, int fd, const iovec* iov, int count, off_t position,
              size_t& written) override {
    ssize_t n;
    do {
      n = ::pwritev(fd, iov, count, position);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return errno;
    written = static_cast<size_t>(n);
    return 0;
  }

  int sync(const std::filesystem::path&, int fd) override {
    return ::fsync(fd) == 0 ? 0 : errno;
  }
  int sync_file_system(const std::filesystem::path&, int fd) override {
    return ::syncfs(fd) == 0 ? 0 : errno;
  }

  int truncate(const std::filesystem::path&, int fd, off_t size) override {
    int rc;
    do {
      rc = ::ftruncate(fd, size);
    } while (rc != 0 && errno == EINTR);
    return rc == 0 ? 0 : errno;
  }

  int rename(const std::filesystem::path& from, const std::filesystem::path& to) override {
    return ::rename(from.c_str(), to.c_str()) == 0 ? 0 : errno;
  }

  int remove(const std::filesystem::path& path) override {
    return ::unlink(path.c_str()) == 0 ? 0 : errno;
  }

  int make_directory(const std::filesystem::path& path, mode_t mode) override {
    return ::mkdir(path.c_str(), mode) == 0 ? 0 : errno;
  }

  int remove_directory(const std::filesystem::path& path) override {
    return ::rmdir(path.c_str()) == 0 ? 0 : errno;
  }
};

std::atomic<storage_env*>& installed() {
  static std::atomic<storage_env*> env{&storage_env::posix()};
  return env;
}

} // namespace

storage_env& storage_env::posix() {
  static posix_env env;
  return env;
}

storage_env& storage_env::current() { return *installed().load(std::memory_order_acquire); }

scoped_storage_env::scoped_storage_env(storage_env& env)
    : previous_(installed().exchange(&env, std::memory_order_acq_rel)) {}

scoped_storage_env::~scoped_storage_env() {
  installed().store(previous_, std::memory_order_release);
}

} // namespace capstan
