#pragma once

// A single node's topics from before it ran the controller quorum of itself alone. Such a node
// kept its topics in its metadata store (runtime/cluster/metadata_store.hpp); now the quorum's
// metadata log holds them. At start-up the store's topics (its node-local __consumer_offsets
// too, which becomes the cluster's) move into `cluster-metadata-import.toml` and out of the store;
// the node hands them to its controller, which adopts them with their topic ids, partitions and
// leader epochs (controller::import_topics), and removes the file once they committed. Each step
// leaves whole files, and every step is repeated after a crash: a staged file found is imported
// again (the controller skips what it holds), a store still holding topics is stripped again.

#include <filesystem>
#include <optional>

#include "actors/controller/metadata/topic_decisions.hpp"
#include "runtime/result.hpp"

namespace capstan {

inline constexpr const char* single_node_import_file = "cluster-metadata-import.toml";

// The import still to hand to the controller of node `node` whose data dir is `data_dir` (none:
// nothing to import), after staging the store's topics and first free producer id in the import
// file and removing them from the store. KAFKA_STORAGE_ERROR when a file cannot be read or
// written.
result<std::optional<controller::import_topics_msg>> stage_single_node_import(
  const std::filesystem::path& data_dir, node_id node);

// A node of a multi-node cluster from before group offsets were replicated kept a node-local
// __consumer_offsets in its metadata store; the cluster's own cannot take it over (each node had
// its own, under its own topic id). INVALID_CONFIG naming what to move aside, if it holds one.
status refuse_node_local_offsets(const std::filesystem::path& data_dir, node_id node);

// Removes the import file once its topics committed.
status finish_single_node_import(const std::filesystem::path& data_dir);

} // namespace capstan
