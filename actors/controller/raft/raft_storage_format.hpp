#pragma once

// Constants of the controller's Raft files; the layout in prose is in docs/controller.md
// ("On disk"). All integers little-endian. Every record carries a CRC-32C (Castagnoli) of the
// bytes that follow the CRC field.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace capstan::raft::storage_format {

// File names inside the controller's Raft directory.
inline constexpr std::string_view hard_state_file = "raft-hard-state";
inline constexpr std::string_view snapshot_file = "raft-snapshot";
inline constexpr std::string_view log_file = "raft-log";
// Suffix of the file written before the rename that replaces one of the above.
inline constexpr std::string_view temp_suffix = ".tmp";

inline constexpr uint32_t version = 1;

// raft-hard-state: crc u32 | version u32 | term u64 | voted_for i32 (-1: none) | zero u32
inline constexpr size_t hard_state_size = 24;
inline constexpr int32_t no_vote = -1;

// raft-snapshot: crc u32 | version u32 | index u64 | term u64 | data length u64 | data
inline constexpr size_t snapshot_header_size = 32;

// raft-log, one frame per entry, back to back from offset 0:
//   crc u32 | data length u32 | term u64 | index u64 | data
inline constexpr size_t frame_header_size = 24;
// Largest entry the log accepts; a longer length field is corruption.
inline constexpr uint32_t max_entry_bytes = uint32_t{64} << 20;

} // namespace capstan::raft::storage_format
