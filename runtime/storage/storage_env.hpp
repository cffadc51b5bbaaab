#pragma once

// The one door through which storage changes files: open/create, write, fsync, truncate, rename,
// remove, mkdir and rmdir (LevelDB's Env, cut to what capstan writes with). file_handle,
// sync_directory, rename_file, remove_file, make_directories and remove_tree call it once per
// system call, never per byte; reads (pread, fstat, directory listings, mmap) go to the kernel
// directly. Tests install a fault_injection_env to make these operations
// fail or stall (runtime/storage/fault_injection_env.hpp).
//
// The env is process-wide: every partition of every node in the process uses the one installed.
// Tests tell partitions apart by path (each node has its own data dir).

#include <cstdint>
#include <filesystem>

#include <sys/types.h>
#include <sys/uio.h>

namespace capstan {

enum class storage_op {
  open,     // open(2), with or without O_CREAT; directories too (before their fsync)
  write,    // pwritev(2)
  sync,     // fsync(2) of a file or a directory
  truncate, // ftruncate(2)
  rename,   // rename(2); the path is the source
  remove,   // unlink(2)
  mkdir,    // mkdir(2)
  rmdir,    // rmdir(2)
};

const char* to_string(storage_op op);

// Every operation returns 0 or the errno it failed with, and retries EINTR itself. `path` is the
// file the descriptor was opened on: an env may judge by it, and must not use it for I/O.
class storage_env {
public:
  storage_env() = default;
  virtual ~storage_env() = default;
  storage_env(const storage_env&) = delete;
  storage_env& operator=(const storage_env&) = delete;

  virtual int open(const std::filesystem::path& path, int flags, mode_t mode, int& fd) = 0;
  // Writes at most the iovecs' total; `written` is how much was (a short write is not an error).
  virtual int pwritev(const std::filesystem::path& path, int fd, const iovec* iov, int count,
                      off_t position, size_t& written) = 0;
  virtual int sync(const std::filesystem::path& path, int fd) = 0;
  virtual int truncate(const std::filesystem::path& path, int fd, off_t size) = 0;
  virtual int rename(const std::filesystem::path& from, const std::filesystem::path& to) = 0;
  // A file that does not exist is ENOENT, as unlink(2) says.
  virtual int remove(const std::filesystem::path& path) = 0;
  // mkdir(2): EEXIST when something is there already.
  virtual int make_directory(const std::filesystem::path& path, mode_t mode) = 0;
  // rmdir(2): the directory must be empty (ENOTEMPTY otherwise).
  virtual int remove_directory(const std::filesystem::path& path) = 0;

  // The env in use: the POSIX one unless a test installed another.
  static storage_env& current();
  // The plain system calls.
  static storage_env& posix();
};

// Installs `env` for the process while it lives, and puts back the one before on destruction.
// REQUIRES: no file operation runs concurrently with the install or the restore that could
// mind which env it gets (tests install before starting nodes and restore after stopping them);
// `env` outlives this object.
class scoped_storage_env {
public:
  explicit scoped_storage_env(storage_env& env);
  ~scoped_storage_env();
  scoped_storage_env(const scoped_storage_env&) = delete;
  scoped_storage_env& operator=(const scoped_storage_env&) = delete;

private:
  storage_env* previous_;
};

} // namespace capstan
