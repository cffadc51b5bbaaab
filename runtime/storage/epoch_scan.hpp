#pragma once

// Rebuilds the leader-epoch cache from stored batches (Kafka does the same while it recovers
// segments): every batch carries the epoch of the leader that appended it, so walking batch
// headers from an offset on restores the epoch entries a checkpoint may lack. Headers only: the
// bytes were validated when they were written or recovered.

#include <memory>
#include <vector>

#include "runtime/result.hpp"
#include "runtime/storage/leader_epoch_cache.hpp"
#include "runtime/storage/segment.hpp"

namespace capstan {

// Assigns the epochs of the batches holding offsets >= `from` in `segments` (ordered by base).
// Returns whether the cache changed; KAFKA_STORAGE_ERROR or CORRUPT_MESSAGE if a read fails.
result<bool> scan_epochs(const std::vector<std::shared_ptr<segment>>& segments, offset from,
                         leader_epoch_cache& cache);

} // namespace capstan
