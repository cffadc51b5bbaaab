#pragma once

// `capstan log repair` as plain code: finds the damaged partitions of a stopped node's data dir
// (the checks start-up makes, runtime/storage/partition_check.hpp), plans what accepting the loss
// means for each (runtime/storage/log_repair.hpp), and applies the plans. The caller holds the
// data dir lock. docs/operations.md, "Damaged partitions".

#include <filesystem>
#include <string>
#include <vector>

#include "runtime/result.hpp"
#include "runtime/storage/log_repair.hpp"
#include "runtime/storage/offset_checkpoint.hpp"
#include "runtime/storage/partition_check.hpp"

namespace capstan {

// Where repairs put what they take out of partition directories: <data-dir>/repair-moved/<partition>/.
inline constexpr const char* repair_moved_dir = "repair-moved";

struct partition_repair {
  topic_partition tp;
  std::string partition; // "orders-0"
  std::filesystem::path dir;
  // What start-up reports for it (find_damage or the missing directory).
  std::string damage;
  checkpointed_offsets checkpoints;
  repair_plan plan;
};

struct data_dir_repair {
  int32_t node_id = 0;
  // Damaged partitions of this node, in topic and partition order.
  std::vector<partition_repair> partitions;
};

// Reads meta.properties (for the node id), cluster-metadata.toml (a single node's partitions and
// their topic ids) and both checkpoints, and checks each partition directory the store, the
// checkpoints or a directory with partition.metadata names (so also the replicas a controller
// placed on the node). `only`
// limits it to the named partitions ("orders-0"; empty: all). Changes nothing. Errors:
// KAFKA_STORAGE_ERROR when meta.properties is missing or a file cannot be read; INVALID_CONFIG
// for a name in `only` that is not a partition of this node.
result<data_dir_repair> find_repairs(const std::filesystem::path& data_dir,
                                     const std::vector<std::string>& only);

// Applies every plan, then writes the checkpoints: a repaired partition's recovery point becomes 0
// (its segments are all re-validated at the next start) and its high watermark the end the node
// knew, so the accepted gaps never turn into reused offsets. Stops at the first failure.
status apply_repairs(const std::filesystem::path& data_dir, const data_dir_repair& repairs);

} // namespace capstan
