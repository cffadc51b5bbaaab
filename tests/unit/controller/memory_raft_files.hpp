#pragma once

// A controller's Raft directory in memory (raft::raft_files), for tests and the controller
// simulation: the same raft_storage code runs over it, and a test decides what a crash leaves of
// the write it cuts short, and loses or damages files on purpose.
//
// A memory_disk outlives the storages opened on it, as a disk outlives a process. Crash model: a
// call returns once its change is durable, so a crash can only cut the call under way. arm_crash
// picks the call: it is done in part (a write keeps a random prefix of its bytes and may leave
// garbage after it; a replacement, truncation or removal is done or not), it fails, and so does
// every later call, until the disk is opened again.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "actors/controller/raft/raft_files.hpp"

namespace capstan::controller::test {

class memory_disk {
public:
  // File name -> content.
  std::map<std::string, bytes, std::less<>> files;

  // The change call after `calls` more complete ones crashes part-way; `seed` picks how.
  void arm_crash(uint64_t calls, uint64_t seed);
  // Any armed crash is off, and a crashed disk takes calls again (the node restarts).
  void reopen();
  bool crashed() const { return crashed_; }

  // Opens the directory on this disk for a raft_storage.
  std::unique_ptr<raft::raft_files> open(std::string where);

  // Called by the files before each change of a disk that has not crashed: whether it runs
  // whole; false once, for the change the armed crash cuts short (done in part, then failed).
  bool may_change();
  std::mt19937_64& tear_rng() { return tear_; }

private:
  std::optional<uint64_t> crash_in_;
  bool crashed_ = false;
  std::mt19937_64 tear_{0};
};

} // namespace capstan::controller::test
