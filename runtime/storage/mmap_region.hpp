#pragma once

// A read-only shared mapping of the first `size` bytes of a file. Reads through it stay valid
// for the object's lifetime even if the file is renamed over or unlinked (the mapping pins the
// inode). Truncating the mapped file itself would turn reads past the new end into SIGBUS, so
// storage never ftruncates a file that is mapped: it writes a new file and renames it instead.

#include <cstddef>
#include <cstdint>
#include <memory>

#include "runtime/result.hpp"
#include "runtime/storage/file_handle.hpp"
#include "runtime/types.hpp"

namespace capstan {

class mmap_region {
public:
  // REQUIRES: size <= the file's size. A size of 0 gives an empty region (no mapping).
  static result<std::shared_ptr<const mmap_region>> map(const file_handle& file, size_t size);

  ~mmap_region();
  mmap_region(const mmap_region&) = delete;
  mmap_region& operator=(const mmap_region&) = delete;

  // Page-aligned start (so 8-byte aligned), nullptr when empty.
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  bytes_view bytes() const { return {data_, size_}; }

private:
  mmap_region(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  const uint8_t* data_;
  size_t size_;
};

} // namespace capstan
