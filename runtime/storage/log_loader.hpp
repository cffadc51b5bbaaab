#pragma once

// Opens a partition directory at start-up (Kafka's LogLoader): finds the segments, trusts those
// wholly below the recovery point, re-validates every batch of the rest, cuts a torn or corrupt
// tail, and deletes segments after a cut (the log must stay contiguous). Files it does not know
// are reported and left alone; producer snapshots are known (the partition log loads them,
// runtime/storage/producer_state_loader.hpp). Plain and synchronous: the caller runs it before spawning actors.

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "runtime/result.hpp"
#include "runtime/storage/segment.hpp"

namespace capstan {

struct loaded_log {
  // Ordered by base offset, never empty: an empty directory gets one segment at `start`.
  std::vector<std::shared_ptr<segment>> segments;
  // Files in the directory that are not ours, by name.
  std::vector<std::string> unknown_files;
  // Segments deleted because an earlier one was cut.
  std::vector<std::string> dropped_segments;
};

// Directory holding the leftovers of an interrupted compaction; removed on load.
inline constexpr const char* compaction_dir_name = "compaction.tmp";

// REQUIRES: dir exists. `start` is the base of the first segment of an empty log.
// `log_name` prefixes log lines ("topic-0 on node 1").
result<loaded_log> load_log(const std::filesystem::path& dir, offset recovery_point,
                            offset start, const segment_options& options,
                            const std::string& log_name);

} // namespace capstan
