#pragma once

// Batches in a buffer that travels from actor to actor without a copy.

#include <cstddef>
#include <memory>

#include "runtime/types.hpp"

namespace capstan {

// A padded batch sequence (docs/formats.md, "Alignment") handed from one actor to the next.
// The sender gives the buffer up with the message: the partition log patches offsets in place.
// [begin, end) must start at a batch and end after one.
struct batch_buffer {
  std::shared_ptr<bytes> data;
  size_t begin = 0;
  size_t end = 0;

  static batch_buffer of(bytes b) {
    auto p = std::make_shared<bytes>(std::move(b));
    size_t n = p->size();
    return {std::move(p), 0, n};
  }
  bytes_view view() const {
    return data ? bytes_view{data->data() + begin, end - begin} : bytes_view{};
  }
  size_t size() const { return end - begin; }
};

} // namespace capstan
