#pragma once

// The incarnation a node's data dir last registered with, kept in <data-dir>/node.incarnation so
// that the next process on that data dir can name it as its previous incarnation when it
// registers (docs/controller.md, "The node's side: broker_lifecycle"). The active controller then
// replaces the old registration at once instead of waiting out its session: the data dir's lock
// makes the old process gone.
//
//   version: 0
//   incarnation_id: <the 16-byte id in URL-safe base64 without padding, 22 characters>
//
// Written atomically (temp file, fsync, rename, fsync of the directory) once a registration was
// accepted; read once at start-up.

#include <filesystem>
#include <optional>

#include "runtime/result.hpp"
#include "runtime/storage/partition_metadata.hpp"

namespace capstan {

inline constexpr const char* incarnation_file_name = "node.incarnation";

// nullopt when `dir` has none; KAFKA_STORAGE_ERROR naming the file when it is unreadable or
// malformed.
result<std::optional<uuid_bytes>> read_incarnation_file(const std::filesystem::path& dir);
// Blocking (fsync): for an I/O worker or the start-up thread.
status write_incarnation_file(const std::filesystem::path& dir, const uuid_bytes& incarnation);

} // namespace capstan
