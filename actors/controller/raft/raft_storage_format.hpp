#pragma once

// Constants of the controller's Raft files; the layout in prose is in docs/controller.md
// ("On disk"). All integers little-endian. Every record carries a CRC-32C (Castagnoli) of the
// bytes that follow the CRC field.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace capstan::raft::storage_format {

// File names inside the controller's Raft directory.
inline constexpr std::string_view identity_file = "raft-identity";
inline constexpr std::string_view hard_state_file = "raft-hard-state";
inline constexpr std::string_view snapshot_file = "raft-snapshot";
inline constexpr std::string_view log_file = "raft-log";
// Suffix of the file written before the rename that replaces one of the above.
inline constexpr std::string_view temp_suffix = ".tmp";

// raft-identity: crc u32 | version u32 | node id i32 | directory id (16 bytes) |
//                cluster id length u32 | cluster id (UTF-8) | voter count u32 | voters i32 each
inline constexpr uint32_t identity_version = 1;
inline constexpr size_t identity_header_size = 32;

// raft-hard-state: crc u32 | version u32 | term u64 | voted_for i32 (-1: none) | flags u32 |
//                  voted-for directory id (16 bytes)
inline constexpr uint32_t hard_state_version = 2;
inline constexpr size_t hard_state_size = 40;
inline constexpr int32_t no_vote = -1;
// flags: the node is catching up (hard_state::catching_up). Other bits must be 0.
inline constexpr uint32_t flag_catching_up = 1;

// raft-snapshot: crc u32 | version u32 | index u64 | term u64 | data length u64 | data |
//                voter set length u32 | voter set (voter_set.hpp's bytes; none: length 0, the
//                bootstrap voters). Version 1 ends after the data and means the bootstrap voters.
inline constexpr uint32_t snapshot_version = 2;
inline constexpr uint32_t snapshot_version_without_voters = 1;
inline constexpr size_t snapshot_header_size = 32;

// raft-log, one frame per entry, back to back from offset 0:
//   crc u32 | data length u32 | term u64 | index u64 | first index of its append u64 | data
// The first index tells a torn append (only the last one can be) from damage to an earlier one.
// The length field's top bit marks a voter set entry (entry_kind::voters); logs written before
// voter changes existed never set it.
inline constexpr size_t frame_header_size = 32;
inline constexpr uint32_t frame_voters_flag = uint32_t{1} << 31;
// Largest entry the log accepts; a longer length field is corruption.
inline constexpr uint32_t max_entry_bytes = uint32_t{64} << 20;

} // namespace capstan::raft::storage_format
