#pragma once

// The gauges of a node's metrics endpoint that need actor state (docs/metrics.md): an actor
// that, every interval, asks the node's replicas and its controller for them and sets them in
// the registry. The endpoint itself never waits for an actor.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

#include <caf/fwd.hpp>

#include "actors/controller/controller_actor.hpp"
#include "actors/replica/replica_messages.hpp"

namespace capstan {

class metrics_registry;

// Where capstan_offline_partitions and capstan_active_controller_count come from: the node's
// controller actor (gauges_atom), as in Kafka, where only the active controller reports 1 and
// the offline count. A node without one (a broker-only node) reports 0 for both.
struct controller_gauge_source {
  controller_actor controller;
};

// Kafka's UnderReplicatedPartitions of one node: the replicas here that lead their partition
// with an ISR smaller than the replica set, each by its own leader state.
int64_t under_replicated_partitions(const std::vector<replica_status>& replicas);

// Sets capstan_active_controller_count and capstan_offline_partitions.
void set_controller_gauges(metrics_registry& registry, const controller_gauges& gauges);

// Spawns an actor that, every `interval`, reads the routing table and asks each replica for its
// log_info and its status (each bounded by `interval`), then replaces the per-partition gauges
// (capstan_partitions, capstan_log_size_bytes, capstan_log_start_offset, capstan_log_end_offset
// {topic,partition}) and capstan_under_replicated_partitions; and asks `source` for the
// controller gauges (set_controller_gauges). A replica that does not answer in time is left out
// of that round; a controller that does not leaves the previous values. The caller ends it with
// an exit message (e.g. caf::anon_send_exit).
caf::actor spawn_partition_metrics_refresher(caf::actor_system& sys,
                                             std::function<routing_table_ptr()> routes,
                                             std::shared_ptr<metrics_registry> registry,
                                             std::chrono::milliseconds interval,
                                             controller_gauge_source source);

} // namespace capstan
