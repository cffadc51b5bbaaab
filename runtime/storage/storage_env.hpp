#pragma once

// The one door through which storage reaches file contents: open/create, read, map, write,
// fsync, truncate, rename, remove, mkdir and rmdir (LevelDB's Env, cut to what capstan does).
// file_handle, mmap_region, sync_directory, rename_file, remove_file, make_directories and
// remove_tree call it once per system call, never per byte. Metadata (fstat, directory listings)
// and the small text files read with std::ifstream (checkpoints, partition.metadata) go to the
// kernel directly. Tests install a fault_injection_env to make these operations fail, stall or
// return flipped bits (runtime/storage/fault_injection_env.hpp), and so does a node started with
// fault.injection.enable, whose fault switch can then fill its disk.
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
  sync,     // fsync(2) of a file or a directory, and syncfs(2)
  truncate, // ftruncate(2)
  rename,   // rename(2); the path is the source
  remove,   // unlink(2)
  mkdir,    // mkdir(2)
  rmdir,    // rmdir(2)
  read,     // pread(2)
  map,      // mmap(2) of a file for reading
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
  // Reads at most `size` bytes at `position` into `out`; `read` is how much was (0 at the end of
  // the file; a short read is not an error).
  virtual int pread(const std::filesystem::path& path, int fd, void* out, size_t size,
                    off_t position, size_t& read) = 0;
  // Maps the first `size` bytes of the file read-only and shared; the caller munmaps `addr`.
  // ENODEV means this file is not to be mapped (mmap(2) says so for a filesystem without mmap,
  // and a test env says so to see every read): the caller reads it with pread instead.
  // REQUIRES: 0 < size <= the file's size.
  virtual int map(const std::filesystem::path& path, int fd, size_t size, const void*& addr) = 0;
  // Writes at most the iovecs' total; `written` is how much was (a short write is not an error).
  virtual int pwritev(const std::filesystem::path& path, int fd, const iovec* iov, int count,
                      off_t position, size_t& written) = 0;
  virtual int sync(const std::filesystem::path& path, int fd) = 0;
  // syncfs(2) of the filesystem that holds the file `fd` is open on: everything written there,
  // names included, is durable after it. A storage_op::sync of `path` to a fault env.
  virtual int sync_file_system(const std::filesystem::path& path, int fd) = 0;
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
