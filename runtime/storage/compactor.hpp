#pragma once

// Log compaction (cleanup.policy=compact) as plain code, run by a background worker actor while
// the partition keeps appending to its active segment. Keeps the latest record per key across the
// given sealed segments; offsets never change. Rules follow Kafka's LogCleaner (docs/storage.md,
// "Compaction").

#include <filesystem>
#include <vector>

#include "runtime/result.hpp"
#include "runtime/storage/segment.hpp"
#include "runtime/types.hpp"

namespace capstan {

struct compaction_input {
  std::filesystem::path dir;        // the partition directory
  std::vector<offset> bases;        // sealed segments to clean, ascending; never the active one
  timestamp_ms now = 0;
  int64_t delete_retention_ms = 86400000;
  segment_options options;
};

struct compacted_segment {
  offset base{0};
  // Directory holding the cleaned <stem>.log, .index and .timeindex (fsynced), not yet live.
  std::filesystem::path staged_dir;
  int64_t size_before = 0;
  int64_t size_after = 0;
  int64_t records_removed = 0;
  // One past the last offset the cleaned copy holds (`base` when it is empty): offsets from here
  // to the next segment's base hold no records once it is installed.
  offset next_after{0};
  // Identity of the live .log that was read (stat's st_dev and st_ino). A sealed segment that
  // is truncated gets a new file, so install can tell the compacted input was replaced.
  uint64_t source_device = 0;
  uint64_t source_inode = 0;
};

struct compaction_output {
  std::vector<compacted_segment> segments;
};

// Reads the sealed segments (they are immutable while sealed), builds key -> latest offset, and
// writes cleaned copies under dir/compaction.tmp/. A record is kept iff it has no key, or its
// offset is the latest for its key and it is not a tombstone (null value) whose timestamp is
// older than now - delete_retention_ms. Control batches are kept whole. A batch is rewritten
// with the same base offset, lastOffsetDelta, producer fields and timestamps, the surviving
// records copied byte for byte, and a new length, count and CRC; a batch left with no record is
// dropped, so a segment may become empty.
// `segments` has one entry per input base, in order, even when nothing was removed from it.
// Starts by discarding any staging an earlier compaction of `dir` left: at most one compaction
// per directory may run at a time. Inputs are re-validated as they are read: a corrupt batch or
// batches whose offsets do not increase within [base, next base) are CORRUPT_MESSAGE, an
// unreadable file KAFKA_STORAGE_ERROR; on any error nothing is left staged and the live
// segments are untouched. Memory: every distinct key of the inputs (docs/compaction.md).
// May be called from any thread; reads only sealed files, writes only under compaction.tmp/.
result<compaction_output> compact_segments(const compaction_input& input);

// Makes a staged segment live in `dir`, crash-safely: the old index files go first, then the
// cleaned .log is renamed over the old one, then the cleaned indexes (a crash in between leaves a
// log whose missing indexes are rebuilt on load). Open file handles to the old files keep reading
// the old data.
// REQUIRES: seg came from compact_segments on `dir`, and the segment at seg.base is still sealed
// (not truncated or deleted since). Afterwards the caller replaces its `segment` object for
// seg.base by a fresh segment::open(open_trusted): the old object's handles point at the old,
// unlinked inodes, so it must be destroyed, never remove()d (that unlinks by path, i.e. the new
// files). Checked before anything is changed, as KAFKA_STORAGE_ERROR: the staged .log exists,
// and the live .log is still the file that was compacted (same inode and size; not deleted by
// retention, truncated or recreated meanwhile), so an install never resurrects removed data.
status install_compacted_segment(const std::filesystem::path& dir, const compacted_segment& seg);

// Removes dir/compaction.tmp and everything in it (nothing when it is absent). Call it after the
// installs, or instead of them to abandon a compaction.
void discard_compaction(const std::filesystem::path& dir);

} // namespace capstan
