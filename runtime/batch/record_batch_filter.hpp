#pragma once

// Rewrites a stored RecordBatch v2 keeping only some of its records, as Kafka's
// MemoryRecords.filterTo does for the log cleaner, but without re-encoding: the header is
// copied, the surviving records' bytes are copied verbatim (a compressed batch's are compressed
// again with its codec), and only batchLength, the record count and the CRC-32C are recomputed.
// Base offset, lastOffsetDelta, producer fields, attributes and both timestamps are unchanged,
// so every surviving record keeps its absolute offset and timestamp.

#include <functional>
#include <optional>

#include "runtime/batch/record_batch_view.hpp"
#include "runtime/types.hpp"

namespace capstan {

// Called once per record, in order, with the record and its absolute offset (base offset +
// offset delta); returns true to keep the record.
using record_predicate = std::function<bool(const record_view&, offset)>;

// The batch with only the records `keep` accepts, or nullopt when it accepts none. The result
// passes record_batch_view::parse in stored mode. Works for control batches too, but the log
// cleaner keeps those whole and does not call this on them.
std::optional<bytes> filter_records(const record_batch_view& batch, const record_predicate& keep);

} // namespace capstan
