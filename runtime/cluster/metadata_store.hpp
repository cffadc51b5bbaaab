#pragma once

// The controller's durable copy of the cluster metadata (single-node quorum): cluster id, the
// first producer id not yet handed out in a block, and every topic with its id, internal flag,
// config overrides and partition assignments. Brokers are not
// stored: they are whoever is live. One TOML file, `<data-dir>/cluster-metadata.toml`
// (docs/operations.md shows it):
//
//   version = 1
//   cluster_id = "..."
//   next_producer_id = 2000      # missing: 0
//   [topics.orders]
//   id = "<32 hex digits>"
//   internal = false
//   configs = { "cleanup.policy" = "compact" }
//   partitions = [ { partition = 0, replicas = [1], leader = 1, leader_epoch = 0, isr = [1] } ]
//
// Written atomically (temp file, fsync, rename, fsync of the directory): a crash leaves the old
// or the new file whole, never a mix.

#include <filesystem>
#include <string>

#include "runtime/cluster/metadata.hpp"
#include "runtime/result.hpp"
#include "runtime/storage/file_handle.hpp" // write_file_atomically

namespace capstan {

inline constexpr const char* metadata_store_file = "cluster-metadata.toml";

// A missing file reads as an empty cluster_metadata (no cluster id, no topics, producer ids
// from 0). An unreadable or
// malformed one is KAFKA_STORAGE_ERROR naming the file and what is wrong. `brokers` and
// `controller_id` are left at their defaults.
result<cluster_metadata> read_metadata_store(const std::filesystem::path& file);

// Replaces the file with `metadata`'s cluster id, next producer id and topics. KAFKA_STORAGE_ERROR
// on failure, and then the previous file is untouched.
status write_metadata_store(const std::filesystem::path& file, const cluster_metadata& metadata);

// 32 lower-case hex digits: how incarnation and directory ids print.
std::string to_hex(const topic_id& id);
// A topic id as this file keeps it: Kafka's text form, 22 characters of URL-safe base64
// (to_base64_uuid, as partition.metadata and `topic describe`), or 32 hex digits, as versions
// before wrote it. KAFKA_STORAGE_ERROR on anything else.
result<topic_id> parse_topic_id(const std::string& text);

} // namespace capstan
