#pragma once

// The offset ranges of a partition log that hold no records on purpose, kept in the partition
// directory as <dir>/offset-gaps so that start-up tells them from lost data (docs/storage.md,
// "Partition directory"). Two writers: compaction, which records [new end, next segment base)
// before it installs a segment whose last batches it removed, and `capstan log repair`, which
// records the ranges whose loss an operator accepted. Text format, as Kafka's checkpoints:
//   0                  version
//   N                  number of ranges
//   <from> <to>        N lines, half-open [from, to), ascending, disjoint
// Written atomically (temp file, fsync, rename, fsync of the directory). A missing file is no gap.

#include <filesystem>
#include <map>

#include "runtime/result.hpp"
#include "runtime/types.hpp"

namespace capstan {

inline constexpr const char* offset_gaps_file = "offset-gaps";

class offset_gaps {
public:
  // Adds [from, to), merging it with the ranges it touches. An empty range adds nothing.
  void add(offset from, offset to);
  // Whether [from, to) lies inside one recorded range (an empty range always does).
  bool covers(offset from, offset to) const;
  // Drops what lies below `start` (segments deleted by retention take their gaps with them).
  void drop_below(offset start);
  bool empty() const { return ranges_.empty(); }
  // from -> to, ascending and disjoint.
  const std::map<offset, offset>& ranges() const { return ranges_; }
  bool operator==(const offset_gaps&) const = default;

private:
  std::map<offset, offset> ranges_;
};

// Reads <dir>/offset-gaps; KAFKA_STORAGE_ERROR naming the file and line when it is malformed.
result<offset_gaps> read_offset_gaps(const std::filesystem::path& dir);
// Replaces <dir>/offset-gaps atomically.
status write_offset_gaps(const std::filesystem::path& dir, const offset_gaps& gaps);

} // namespace capstan
