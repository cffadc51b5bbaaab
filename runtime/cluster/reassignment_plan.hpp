#pragma once

// What `capstan topic reassign` asks the controller for, computed from the cluster's metadata
// (docs/operations.md, "Replacing a node"): a node's replicas handed to another node, one target
// replica list for a topic's partitions, or a cancel.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/client/cluster_client.hpp"
#include "runtime/cluster/metadata.hpp"
#include "runtime/result.hpp"

namespace capstan {

// Every partition of `topic` (nullopt: of every topic) that lists node `from` gets its replica
// list with `to` in `from`'s place (so the preferred order stays). Partitions without `from` are
// left out. INVALID_REPLICA_ASSIGNMENT when `from` and `to` are the same node, or when a
// partition lists both (the replacement would leave it a replica short); UNKNOWN_TOPIC_OR_PARTITION
// for a topic the metadata does not hold. An empty plan is no error: nothing is on `from`.
result<std::vector<client::reassignment_request>>
plan_node_replacement(const cluster_metadata& md, const std::optional<std::string>& topic,
                      int32_t from, int32_t to);

// Partition `partition` of `topic` (nullopt: each of its partitions) to `replicas`; an empty
// `replicas` cancels. UNKNOWN_TOPIC_OR_PARTITION for a topic or partition the metadata does not
// hold.
result<std::vector<client::reassignment_request>>
plan_partition_targets(const cluster_metadata& md, const std::string& topic,
                       std::optional<int32_t> partition, const std::vector<int32_t>& replicas);

} // namespace capstan
