#pragma once

// Kafka's partition.metadata: one small file in each partition directory that names the topic id
// the directory belongs to, so a directory left behind by a deleted topic is never taken for the
// partition of a new topic with the same name (docs/storage.md, "Partition directory"):
//
//   version: 0
//   topic_id: <the 16-byte id in URL-safe base64 without padding, 22 characters>
//
// Written atomically (temp file, rename). A new directory's file is written without an fsync and
// made durable, with the directory, before the log writes its first record
// (make_partition_dir_durable), as Kafka flushes it before the first append: a directory that
// holds records always names its topic.

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/result.hpp"
#include "runtime/storage/file_handle.hpp"

namespace capstan {

inline constexpr const char* partition_metadata_file = "partition.metadata";

// A topic id (runtime/cluster/metadata.hpp's topic_id is the same type).
using uuid_bytes = std::array<uint8_t, 16>;

// Kafka's Uuid.toString: URL-safe base64 without padding.
std::string to_base64_uuid(const uuid_bytes& id);
// KAFKA_STORAGE_ERROR unless `text` is 22 characters of URL-safe base64 encoding 16 bytes.
result<uuid_bytes> parse_base64_uuid(std::string_view text);

// A file of two lines, "version: 0" and "<key>: <the id in URL-safe base64>", as partition.metadata
// is (runtime/cluster/incarnation_file.hpp uses it too). nullopt when `file` does not exist;
// KAFKA_STORAGE_ERROR naming the file when it is unreadable or malformed.
result<std::optional<uuid_bytes>> read_uuid_file(const std::filesystem::path& file,
                                                 std::string_view key);
// Written atomically (temp file, rename); synced, with an fsync of the file and of the directory.
status write_uuid_file(const std::filesystem::path& file, std::string_view key,
                       const uuid_bytes& id, sync_mode mode = sync_mode::synced);

// nullopt when `dir` has no partition.metadata; KAFKA_STORAGE_ERROR naming the file when it is
// unreadable or malformed.
result<std::optional<uuid_bytes>> read_partition_metadata(const std::filesystem::path& dir);
status write_partition_metadata(const std::filesystem::path& dir, const uuid_bytes& id,
                                sync_mode mode = sync_mode::synced);
// `dir`'s partition.metadata is there but empty or all zero bytes: what a crash leaves of a file
// whose name became durable before its content (a new directory's, written without an fsync).
bool partition_metadata_torn(const std::filesystem::path& dir);
// fsyncs `dir`'s partition.metadata, `dir` and the directory that holds it: what a new partition
// directory needs durable before a record is written into it. All three are opened before the
// first fsync; `out_of_descriptors` (may be null) is set when an open failed with EMFILE or
// ENFILE, so nothing was fsynced and a syncfs through a descriptor already open may do instead.
// After a failed fsync nothing may: the kernel may have dropped the pages it could not write.
status make_partition_dir_durable(const std::filesystem::path& dir,
                                  bool* out_of_descriptors = nullptr);

} // namespace capstan
