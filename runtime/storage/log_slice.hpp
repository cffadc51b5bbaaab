#pragma once

// Bytes handed out by a log read without copying them again: whole batches, 8-byte aligned at
// `data`, kept alive by `owner` (an mmap of a sealed segment, or one pread buffer). A slice may
// outlive the segment it came from: the mapping stays valid until the last slice is dropped.

#include <cstddef>
#include <cstdint>
#include <memory>

#include "runtime/types.hpp"

namespace capstan {

struct log_slice {
  std::shared_ptr<const void> owner;
  const uint8_t* data = nullptr;
  size_t size = 0;
  // Offsets covered: [first_offset, next_offset). next_offset = last batch's last offset + 1.
  offset first_offset{0};
  offset next_offset{0};

  bytes_view bytes() const { return {data, size}; }
  bool empty() const { return size == 0; }
};

} // namespace capstan
