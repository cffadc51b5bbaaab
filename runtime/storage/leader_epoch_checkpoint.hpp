#pragma once

// A partition's leader-epoch-checkpoint file (Kafka's format, in the partition directory):
//   0                      version
//   N                      number of entries
//   <epoch> <start offset> N lines, epochs and offsets strictly increasing
// Written atomically (write, fsync, rename), so a crash leaves the old or the new list.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/result.hpp"
#include "runtime/storage/file_handle.hpp" // sync_mode
#include "runtime/storage/leader_epoch_cache.hpp"

namespace capstan {

inline constexpr const char* leader_epoch_checkpoint_name = "leader-epoch-checkpoint";

std::string format_leader_epoch_checkpoint(const std::vector<epoch_entry>& entries);
// KAFKA_STORAGE_ERROR naming the line when the text is not a version 0 checkpoint.
result<std::vector<epoch_entry>> parse_leader_epoch_checkpoint(std::string_view text);

// A missing file reads as empty.
result<std::vector<epoch_entry>> read_leader_epoch_checkpoint(const std::filesystem::path& file);
status write_leader_epoch_checkpoint(const std::filesystem::path& file,
                                     const std::vector<epoch_entry>& entries,
                                     sync_mode mode = sync_mode::synced);

} // namespace capstan
