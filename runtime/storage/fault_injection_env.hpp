#pragma once

// A storage_env for tests that breaks chosen file operations on purpose (Redpanda keeps such a
// fault injector beside its storage; LevelDB's fault_injection_test does the same with its Env).
// A rule names a path substring and an operation; a matching call then either fails with an
// errno (EIO, ENOSPC, ...) without touching the file, or stalls: the calling thread blocks until
// the test releases it, then the operation runs for real. Calls that match no rule go to the
// wrapped env. Thread-safe: any thread may run file operations while the test changes rules.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/storage/storage_env.hpp"

namespace capstan {

class fault_injection_env final : public storage_env {
public:
  explicit fault_injection_env(storage_env& base = storage_env::posix());
  // Releases every stalled call and waits until each has left the env.
  ~fault_injection_env() override;

  // `op` on a path containing `path_part` fails with `err` from now on.
  void fail(std::string path_part, storage_op op, int err);
  // `op` on a path containing `path_part` blocks from now on, until release().
  void stall(std::string path_part, storage_op op);
  // Lets every stalled call go on and drops the stall rules; failure rules stay.
  void release();
  // Drops every rule and releases every stalled call.
  void clear();

  // Waits up to `timeout` until at least `n` calls are blocked in a stall; true iff they are.
  bool wait_stalled(size_t n, std::chrono::milliseconds timeout);
  size_t stalled() const;
  // How many calls failed or stalled because of a rule.
  size_t injected() const;

  // A stalled call that nobody releases goes on by itself after this long, so a test that
  // forgets to release (or fails before it) cannot hang its process forever. Tests do not rely
  // on it: they release.
  std::chrono::milliseconds stall_limit{std::chrono::seconds(60)};

  int open(const std::filesystem::path& path, int flags, mode_t mode, int& fd) override;
  int pwritev(const std::filesystem::path& path, int fd, const iovec* iov, int count,
              off_t position, size_t& written) override;
  int sync(const std::filesystem::path& path, int fd) override;
  int truncate(const std::filesystem::path& path, int fd, off_t size) override;
  int rename(const std::filesystem::path& from, const std::filesystem::path& to) override;
  int remove(const std::filesystem::path& path) override;
  int make_directory(const std::filesystem::path& path, mode_t mode) override;
  int remove_directory(const std::filesystem::path& path) override;

private:
  struct rule {
    std::string path_part;
    storage_op op;
    int err; // 0: stall
  };

  // 0 when the call may go on to the base env, else the errno to fail it with. Blocks while a
  // stall rule matches, until release() or stall_limit.
  int check(const std::filesystem::path& path, storage_op op);

  storage_env& base_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<rule> rules_;
  uint64_t release_generation_ = 0;
  size_t stalled_ = 0;
  size_t inside_ = 0;
  size_t injected_ = 0;
};

} // namespace capstan
