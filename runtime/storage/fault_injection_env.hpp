#pragma once

// A storage_env for tests that breaks chosen file operations on purpose (Redpanda keeps such a
// fault injector beside its storage; LevelDB's fault_injection_test does the same with its Env).
// A rule names a path substring and an operation; a matching call then either fails with an
// errno (EIO, ENOSPC, ...) without touching the file, or stalls: the calling thread blocks until
// the test releases it, then the operation runs for real. A flip rule makes reads return one
// byte with bits flipped while the file keeps it, as a disk that hands back bad data without an
// error. Calls that match no rule go to the wrapped env. Thread-safe: any thread may run file
// operations while the test changes rules.
//
// Reads through a mapping do not pass the env. To fault the reads of a file that storage maps
// (a sealed segment; the whole file at recovery, survey and compaction), make it unmappable
// before it is mapped: fail(path_part, storage_op::map, ENODEV), and storage reads it with
// pread instead (docs/storage.md, "Reads").

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
  // From now on, every read of a file whose path contains `path_part` that covers byte
  // `position` returns that byte XOR `mask` (the file keeps its bytes). clear() drops it.
  void flip(std::string path_part, uint64_t position, uint8_t mask = 0x01);
  // A full disk under `path_part` from now on: every write, fsync and creation (an open with
  // O_CREAT, a mkdir) there fails with `err`; reads, truncation, renames and removals go on, as
  // they do on a real full disk (they need no new blocks).
  void fill_disk(std::string path_part, int err);
  // Lets every stalled call go on and drops the stall rules; failure rules stay.
  void release();
  // Drops every rule and releases every stalled call.
  void clear();
  // Drops the rules and flips set for exactly `path_part`; those of other paths stay. If it
  // drops a stall rule, every stalled call goes on (a stalled call does not know its rule).
  void clear(const std::string& path_part);

  // Waits up to `timeout` until at least `n` calls are blocked in a stall; true iff they are.
  bool wait_stalled(size_t n, std::chrono::milliseconds timeout);
  size_t stalled() const;
  // How many calls failed, stalled or read flipped bits because of a rule.
  size_t injected() const;

  // A stalled call that nobody releases goes on by itself after this long, so a test that
  // forgets to release (or fails before it) cannot hang its process forever. Tests do not rely
  // on it: they release.
  std::chrono::milliseconds stall_limit{std::chrono::seconds(60)};

  int open(const std::filesystem::path& path, int flags, mode_t mode, int& fd) override;
  int pread(const std::filesystem::path& path, int fd, void* out, size_t size, off_t position,
            size_t& read) override;
  int map(const std::filesystem::path& path, int fd, size_t size, const void*& addr) override;
  int pwritev(const std::filesystem::path& path, int fd, const iovec* iov, int count,
              off_t position, size_t& written) override;
  int sync(const std::filesystem::path& path, int fd) override;
  int sync_file_system(const std::filesystem::path& path, int fd) override;
  int truncate(const std::filesystem::path& path, int fd, off_t size) override;
  int rename(const std::filesystem::path& from, const std::filesystem::path& to) override;
  int remove(const std::filesystem::path& path) override;
  int make_directory(const std::filesystem::path& path, mode_t mode) override;
  int remove_directory(const std::filesystem::path& path) override;

private:
  struct rule {
    std::string path_part;
    storage_op op;
    int err;            // 0: stall
    int open_flags = 0; // an open matches only with all of these flags
  };
  struct flip_rule {
    std::string path_part;
    uint64_t position;
    uint8_t mask;
  };

  // 0 when the call may go on to the base env, else the errno to fail it with. Blocks while a
  // stall rule matches, until release() or stall_limit.
  int check(const std::filesystem::path& path, storage_op op, int open_flags = 0);
  // Applies the flip rules to `size` bytes read at `position` into `data`.
  void flip_read(const std::filesystem::path& path, uint8_t* data, size_t size, uint64_t position);

  storage_env& base_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<rule> rules_;
  std::vector<flip_rule> flips_;
  uint64_t release_generation_ = 0;
  size_t stalled_ = 0;
  size_t inside_ = 0;
  size_t injected_ = 0;
};

} // namespace capstan
