#pragma once

// A read-only view of the first `size` bytes of a file: a shared mapping, or, when the storage
// env will not map the file (runtime/storage/storage_env.hpp, ENODEV), a copy read into memory
// through the env. Reads through it stay valid for the object's lifetime even if the file is
// renamed over or unlinked (the mapping pins the inode). Truncating the mapped file itself would
// turn reads past the new end into SIGBUS, so storage never ftruncates a file that is mapped: it
// writes a new file and renames it instead.

#include <cstddef>
#include <cstdint>
#include <memory>

#include "runtime/result.hpp"
#include "runtime/storage/file_handle.hpp"
#include "runtime/types.hpp"

namespace capstan {

class mmap_region {
public:
  // The mapping, or when the env will not map the file, its bytes read into memory: for scans
  // of a whole file (recovery, the survey, compaction), which then see what a read sees.
  // REQUIRES: size <= the file's size. A size of 0 gives an empty region (no mapping).
  static result<std::shared_ptr<const mmap_region>> map(const file_handle& file, size_t size);
  // The mapping, or nullptr when the env will not map the file: the caller then reads with
  // pread (a sealed segment serving fetches must not hold a copy of itself). Same REQUIRES.
  static result<std::shared_ptr<const mmap_region>> try_map(const file_handle& file, size_t size);

  ~mmap_region();
  mmap_region(const mmap_region&) = delete;
  mmap_region& operator=(const mmap_region&) = delete;

  // 8-byte aligned (a mapping starts on a page), nullptr when empty.
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  bytes_view bytes() const { return {data_, size_}; }

private:
  mmap_region(const uint8_t* data, size_t size, std::unique_ptr<uint64_t[]> copy)
      : data_(data), size_(size), copy_(std::move(copy)) {}

  const uint8_t* data_;
  size_t size_;
  // The bytes, when they were read rather than mapped.
  std::unique_ptr<uint64_t[]> copy_;
};

} // namespace capstan
