#pragma once

// Recovery of the Raft log file (docs/controller.md, "On disk"): the longest prefix of frames
// that are whole, pass their CRC and follow each other, and whether what follows it is a torn
// append or damage. Each append is one write and one fsync, and the next starts only once the
// last returned; so only the last append can be torn by a crash, and nothing it holds was
// acknowledged. If a whole frame of any other append lies beyond the cut, an append that had
// returned (and whose entries this node may have acknowledged) was damaged instead.
//
// Damage within the last append alone looks like a torn write, and is taken for one. The log
// rewritten after a snapshot is no append: it replaced the file atomically, so damage to its
// frames is always damage.

#include <string>
#include <vector>

#include "actors/controller/raft/raft_types.hpp"

namespace capstan::raft {

struct log_scan {
  // The entries after `snapshot_index`, consecutive from snapshot_index + 1, and where each
  // frame starts.
  std::vector<entry> entries;
  std::vector<uint64_t> positions;
  // Where the kept frames end (frames at or below the snapshot included).
  uint64_t valid_bytes = 0;
  // Why the rest was cut; empty when nothing was.
  std::string reason;
  // What was cut is damage, not a torn append (see above); also an entry that leaves a gap after
  // the snapshot.
  bool damaged = false;
};

// REQUIRES: nothing; any bytes are a log to recover.
log_scan scan_log(bytes_view content, log_index snapshot_index);

} // namespace capstan::raft
