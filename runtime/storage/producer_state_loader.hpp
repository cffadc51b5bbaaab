#pragma once

// Keeps a partition's producer state (runtime/storage/producer_state.hpp) in step with its log
// across restarts, as Kafka's ProducerStateManager and UnifiedLog do: rebuild the state when the
// log opens, from the newest readable snapshot at or below the log end plus the stored batches
// after it, and remove snapshots a truncation or retention made wrong or useless
// (docs/idempotence.md, "Snapshots"). Plain and blocking: the partition log runs these on its
// I/O worker (or, when loading, wherever it loads the directory).

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "runtime/result.hpp"
#include "runtime/storage/producer_state.hpp"
#include "runtime/storage/segment.hpp"

namespace capstan {

// Replays every stored batch holding offsets >= `from` in `segments` (ordered by base) into
// `state`, without checks (reading headers only: the bytes were validated when written or
// recovered). KAFKA_STORAGE_ERROR or CORRUPT_MESSAGE when a read fails.
status scan_producers(const std::vector<std::shared_ptr<segment>>& segments, offset from,
                      producer_state& state);

// The producer state of the log made of `segments` (REQUIRES: not empty, ordered by base), whose
// end offset is set to the log end. First removes the snapshots above the log end (their batches
// were cut, by recovery or by a truncation the crash interrupted); then takes the newest
// snapshot, and if it is damaged (CORRUPT_MESSAGE) logs that, removes it and tries the next
// older one; then replays the batches from the snapshot's end offset (or from the log start
// without one). KAFKA_STORAGE_ERROR when a file cannot be listed, read or removed.
result<producer_state> load_producer_state(const std::filesystem::path& dir,
                                           const std::vector<std::shared_ptr<segment>>& segments,
                                           const std::string& log_name);

// Removes the snapshots whose end offset is above `end` (after a truncation to `end`).
status delete_producer_snapshots_after(const std::filesystem::path& dir, offset end);

// Removes the snapshots whose end offset is below `log_start`, except the newest snapshot of the
// directory (after retention moved the log start; Kafka's deleteSnapshotsBefore).
status delete_producer_snapshots_before(const std::filesystem::path& dir, offset log_start);

// Removes every snapshot (the log restarts empty, Kafka's truncateFullyAndStartAt).
status delete_all_producer_snapshots(const std::filesystem::path& dir);

} // namespace capstan
