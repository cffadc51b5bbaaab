#pragma once

// A node's producer ids for initProducerId (Kafka's ProducerIdManager, broker side): the block the
// controller allocated to it last (actors/controller/metadata/producer_id_decisions.hpp), handed
// out one id at a time. When it is used up the node asks for the next block; the ids of a block
// it never finished (it restarted) are lost, never handed out again. Not thread-safe: one actor
// owns it.

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "runtime/result.hpp"

namespace capstan {

// Kafka's ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE.
inline constexpr int64_t producer_id_block_size = 1000;

// Producer ids [first_id, first_id + size).
struct producer_id_block {
  int64_t first_id = 0;
  int64_t size = 0;
};

// The block of `size` ids starting at `next`, the first id not yet handed out. UNKNOWN_SERVER_ERROR
// when size <= 0 or the block would pass the largest int64 (the ids are used up; Kafka refuses
// the same way).
inline result<producer_id_block> next_producer_id_block(int64_t next, int64_t size) {
  if (size <= 0 || next > std::numeric_limits<int64_t>::max() - size)
    return make_error(errc::unknown_server_error, "no producer id block of " +
                                                      std::to_string(size) + " left after id " +
                                                      std::to_string(next));
  return producer_id_block{next, size};
}

class producer_id_pool {
public:
  producer_id_pool() = default;
  producer_id_pool(const producer_id_pool&) = default;
  producer_id_pool& operator=(const producer_id_pool&) = default;
  producer_id_pool(producer_id_pool&&) = default;
  producer_id_pool& operator=(producer_id_pool&&) = default;
  ~producer_id_pool() = default;

  // The next id of the current block; nullopt when there is none left (ask for a block).
  std::optional<int64_t> take() {
    if (next_ >= end_) return std::nullopt;
    return next_++;
  }

  // Replaces the current block (whatever is left of it is dropped). REQUIRES: b.size >= 0.
  void refill(producer_id_block b) {
    next_ = b.first_id;
    end_ = b.first_id + b.size;
  }

  bool empty() const { return next_ >= end_; }

private:
  int64_t next_ = 0;
  int64_t end_ = 0;
};

} // namespace capstan
