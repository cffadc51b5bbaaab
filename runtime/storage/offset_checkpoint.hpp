#pragma once

// Kafka's offset checkpoint files (recovery-point-offset-checkpoint,
// replication-offset-checkpoint): per data dir, one offset per topic-partition. Text format:
//   0                      version
//   N                      number of entries
//   <topic> <partition> <offset>   N lines
// Written atomically: a temp file is written and fsynced, renamed over the old one, and the
// directory fsynced, so a crash leaves either the old or the new file, never a mix.

#include <filesystem>
#include <map>
#include <string>
#include <utility>

#include "runtime/result.hpp"
#include "runtime/types.hpp"

namespace capstan {

// Per partition: every offset below it was fsynced.
inline constexpr const char* recovery_point_checkpoint_name = "recovery-point-offset-checkpoint";
// Per partition: its high watermark, i.e. the offsets below it were handed out to clients.
inline constexpr const char* high_watermark_checkpoint_name = "replication-offset-checkpoint";

using topic_partition = std::pair<std::string, int32_t>;
using offset_map = std::map<topic_partition, offset>;

// A missing file reads as empty. A malformed one is KAFKA_STORAGE_ERROR naming the line.
result<offset_map> read_offset_checkpoint(const std::filesystem::path& file);
status write_offset_checkpoint(const std::filesystem::path& file, const offset_map& offsets);

} // namespace capstan
