#pragma once

// Stored batches as a Kafka client reads them. capstan's logs and native fetch responses put
// 0-7 zero bytes after each batch so the next starts at a multiple of 8 (docs/formats.md,
// "Alignment"); a Kafka client would read that padding as the start of another batch, so the
// Kafka listener sends the batches back to back.

#include <cstddef>
#include <limits>

#include "runtime/types.hpp"

namespace capstan {

// The batches of `padded` (a stored, padded batch sequence) without their padding, in one copy,
// as many whole batches as fit in `budget` bytes; with `at_least_one`, the first batch goes
// whatever its size (Kafka's rule for the first batch of a fetch response, so that a consumer
// makes progress past a batch larger than its limit). Stops at the first batch whose length is
// negative or runs past the end, which a stored sequence never holds.
bytes unpadded_batches(bytes_view padded, size_t budget = std::numeric_limits<size_t>::max(),
                       bool at_least_one = true);

} // namespace capstan
