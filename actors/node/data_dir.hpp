#pragma once

// A node's claim on its data dir: the exclusive lock (<data-dir>/.lock) held for the node's life,
// and meta.properties, which ties the directory to one node id and one cluster id as in Kafka:
//
//   #capstan node data dir: do not edit
//   version=1
//   node.id=1
//   cluster.id=<22 characters of URL-safe base64>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "runtime/result.hpp"

namespace capstan {

inline constexpr const char* meta_properties_file = "meta.properties";
inline constexpr const char* data_dir_lock_file = ".lock";

// An exclusive flock on <dir>/.lock, released when the object goes away (or the process dies, so a
// kill -9 never leaves a stale lock).
class data_dir_lock {
public:
  // KAFKA_STORAGE_ERROR "... is in use by another capstan node ..." when the lock is held, or when
  // the lock file cannot be opened.
  static result<data_dir_lock> acquire(const std::filesystem::path& dir);

  data_dir_lock(data_dir_lock&& other) noexcept;
  data_dir_lock& operator=(data_dir_lock&&) = delete;
  data_dir_lock(const data_dir_lock&) = delete;
  data_dir_lock& operator=(const data_dir_lock&) = delete;
  ~data_dir_lock();

  // Whether acquire() created the lock file (it was not there before). A start that fails can
  // then remove it again and leave the data dir as it found it.
  bool created_file() const { return created_; }

private:
  data_dir_lock(int fd, bool created) : fd_(fd), created_(created) {}
  int fd_;
  bool created_;
};

struct meta_properties {
  int32_t node_id = 0;
  std::string cluster_id;
};

// nullopt when the file does not exist; KAFKA_STORAGE_ERROR when it is unreadable or malformed.
result<std::optional<meta_properties>> read_meta_properties(const std::filesystem::path& dir);
// Written atomically (temp file, fsync, rename, fsync of the directory).
status write_meta_properties(const std::filesystem::path& dir, const meta_properties& meta);

// Checks <dir>/meta.properties against this node, or writes it on first start (with `cluster_id`,
// or a new random one when empty). Returns the directory's identity. INVALID_CONFIG with both ids
// in the message when the directory belongs to another node id or (`cluster_id` given) to another
// cluster. KAFKA_STORAGE_ERROR, writing nothing, when meta.properties is missing but the directory
// holds a node's data (cluster-metadata.toml, a checkpoint, a <topic>-<partition> directory):
// the message says that meta.properties is missing and what to write back.
result<meta_properties> claim_data_dir(const std::filesystem::path& dir, int32_t node_id,
                                       const std::string& cluster_id);

// A random cluster id as Kafka makes them: 16 random bytes in URL-safe base64 without padding.
std::string new_cluster_id();

} // namespace capstan
