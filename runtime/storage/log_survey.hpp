#pragma once

// A read-only look at a partition directory before anything opens it: which segments it holds,
// where each one's valid batches end, what start-up recovery would cut, which index files lost
// their .log, and the directory's partition.metadata and offset-gaps. Start-up compares this
// with the checkpoints (partition_check.hpp) before load_log changes a byte, and `capstan log
// repair` plans from it. Plain and synchronous; it never writes.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "runtime/result.hpp"
#include "runtime/storage/offset_gaps.hpp"
#include "runtime/storage/partition_metadata.hpp"
#include "runtime/types.hpp"

namespace capstan {

struct surveyed_segment {
  offset base{0};
  // One past the last offset of the batches recovery keeps; `base` when it keeps none.
  offset end{0};
  uint64_t file_bytes = 0;
  // What recovery keeps; below file_bytes it cuts the rest (a torn or corrupt tail, garbage).
  uint64_t valid_bytes = 0;
  // Why the rest would be cut; empty when nothing would be.
  std::string cut_reason;

  bool would_cut() const { return valid_bytes < file_bytes; }
};

struct log_survey {
  bool exists = false;
  // Every <base>.log, ascending.
  std::vector<surveyed_segment> segments;
  // Bases that have a .index or .timeindex but no .log, ascending.
  std::vector<offset> orphan_indexes;
  // From partition.metadata; nullopt when the directory has none, or a torn one (metadata_torn).
  std::optional<uuid_bytes> topic_id;
  // partition.metadata is torn (partition_metadata_torn) and no segment holds a byte: what a crash
  // soon after the directory's creation leaves; the file is to be written again.
  bool metadata_torn = false;
  offset_gaps gaps;

  // Some segment holds a byte.
  bool holds_bytes() const;
};

// Segments that the log loader would trust (their successor starts at or below
// `recovery_point`) are validated from their last offset index entry on (from position 0 when
// that fails), the others wholly, with the rules of segment::open(open_recover) (docs/storage.md,
// "Opening and recovery"). Errors: KAFKA_STORAGE_ERROR naming the path when `dir` is not a
// directory or a file cannot be listed, stat'ed, read or mapped, when partition.metadata is
// unreadable or malformed (but torn in a directory without a byte in its segments:
// metadata_torn), and when offset-gaps is malformed.
result<log_survey> survey_log(const std::filesystem::path& dir, offset recovery_point,
                              size_t max_batch_bytes);

} // namespace capstan
