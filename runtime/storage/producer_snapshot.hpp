#pragma once

// A partition's producer state snapshot, `<end offset, 20 digits>.snapshot` in the partition
// directory: the state of every producer as of the log up to (not including) the end offset in its
// name, so that opening the log replays only the batches from there (docs/formats.md, "Producer
// snapshot"; docs/idempotence.md). Versioned and CRC-32C checked like Kafka's producer snapshot,
// but keeping all retained batches of a producer, not only its last one, so a restarted leader
// deduplicates every retry it would have before. Not yet written or read by the partition log.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/result.hpp"
#include "runtime/storage/producer_state.hpp"
#include "runtime/types.hpp"

namespace capstan {

inline constexpr int16_t producer_snapshot_version = 1;
inline constexpr std::string_view producer_snapshot_suffix = ".snapshot";
// Fixed part: version (int16), crc (uint32), producer count (int32).
inline constexpr size_t producer_snapshot_header_size = 10;
// Per producer: id (int64), epoch (int16), batch count (int32).
inline constexpr size_t producer_snapshot_producer_size = 14;
// Per batch: first and last sequence (int32 each), first and last offset, max timestamp (int64).
inline constexpr size_t producer_snapshot_batch_size = 32;

// "00000000000000000042.snapshot" for end offset 42.
std::string producer_snapshot_name(offset end);
// The end offset a snapshot file name stands for; nullopt for any other name.
std::optional<offset> parse_producer_snapshot_name(std::string_view name);

bytes encode_producer_snapshot(const producer_state& state);
// The state (end offset = `end`) the bytes hold. CORRUPT_MESSAGE, naming what is wrong, for a
// truncated or damaged snapshot or an unknown version: the caller then rebuilds from the log.
result<producer_state> decode_producer_snapshot(bytes_view data, offset end);

// Writes the snapshot named after state.end_offset() into `dir` atomically (temp file, fsync,
// rename, directory fsync): a crash leaves no snapshot or a whole one.
status write_producer_snapshot(const std::filesystem::path& dir, const producer_state& state);
// Reads a snapshot file; its end offset comes from its name. KAFKA_STORAGE_ERROR when it cannot be
// read, CORRUPT_MESSAGE as decode_producer_snapshot.
result<producer_state> read_producer_snapshot(const std::filesystem::path& file);
// The end offsets of the snapshots in `dir`, ascending.
result<std::vector<offset>> list_producer_snapshots(const std::filesystem::path& dir);

} // namespace capstan
