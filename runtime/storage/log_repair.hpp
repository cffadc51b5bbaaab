#pragma once

// Making a damaged partition directory consistent again without ever reusing an offset, once an
// operator accepts the loss (`capstan log repair`, docs/operations.md, "Damaged partitions"):
//  - a missing directory is created and starts empty at the checkpointed end (the log start is
//    then that offset);
//  - a log that ends below the checkpointed end gets an empty segment there, and the offsets in
//    between are recorded as a gap (offset-gaps);
//  - a hole between two segments is recorded as a gap;
//  - a segment with a corrupt or torn part below the checkpointed end is copied aside whole, then
//    cut after its last valid batch; what follows it is kept and the lost range recorded as a gap;
//  - a segment that overlaps the one before it, a segment with no valid batch that does not
//    continue the one before it (a stray file), and index files without their .log are moved
//    aside.
// Nothing is deleted: what is removed from the log goes to a directory of its own. Plain and
// synchronous; the caller holds the data dir lock.

#include <filesystem>
#include <string>
#include <vector>

#include "runtime/result.hpp"
#include "runtime/storage/log_survey.hpp"

namespace capstan {

struct repair_step {
  enum class kind {
    create_directory,
    write_partition_metadata,
    remove_partition_metadata, // a torn one, when the topic id is unknown: the node writes it
    move_aside,         // <file>.log, .index and .timeindex (those present) go to the aside dir
    copy_aside_and_cut, // `file` is copied there, then cut to `keep_bytes`
    create_segment,     // an empty segment at `from`
    record_gap,         // [from, to) goes into offset-gaps
  };
  kind what = kind::create_directory;
  std::string file; // a name (move_aside: a segment's stem) inside the partition directory
  offset from{0};
  offset to{0};
  uint64_t keep_bytes = 0;
  // What a person reads, e.g. "record offsets 540..599 as a gap".
  std::string text;
};

struct repair_plan {
  // In the order they are applied: moves and cuts, then new segments, then the records.
  std::vector<repair_step> steps;
  // Written into partition.metadata; all zeros: unknown, none is written (the node writes it when
  // it opens the replica).
  uuid_bytes topic_id{};
  bool empty() const { return steps.empty(); }
};

// What to do to `survey` (of a directory that may be missing) so that it loads with every offset
// below `known_end` either present or recorded as a gap, and nothing is reused. Empty when the
// directory needs nothing.
repair_plan plan_repair(const log_survey& survey, offset known_end, const uuid_bytes& topic_id);

// Applies `plan` to `dir`; files moved or copied aside go to `aside_dir` (created when needed; a
// name already taken there gets a ".1", ".2" ... suffix). Every change is fsynced, with its
// directory. Stops at the first failure: KAFKA_STORAGE_ERROR naming the file and reason.
status apply_repair(const std::filesystem::path& dir, const repair_plan& plan,
                    const std::filesystem::path& aside_dir);

} // namespace capstan
