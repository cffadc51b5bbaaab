#pragma once

// Spawns the group coordinator (protocol: group_coordinator_actor in group_coordinator_actor.hpp).
// It keeps committed offsets in the cluster's __consumer_offsets, whose replicas it finds through
// the replica manager; the controller creates that topic on a group's first FindCoordinator
// (docs/groups.md).

#include <chrono>
#include <functional>
#include <memory>

#include <caf/fwd.hpp>

#include "actors/group/group_coordinator_actor.hpp"
#include "actors/group/group_membership.hpp"
#include "actors/replica/metadata_cache.hpp"
#include "actors/replica/replica_messages.hpp"
#include "runtime/metrics/metrics_registry.hpp"

namespace capstan {

struct group_coordinator_options {
  replica_manager_actor replicas;
  // This node, and its metadata cache: it coordinates the groups whose partition of
  // __consumer_offsets the cache names it the leader of.
  node_id node{0};
  std::function<metadata_cache_ptr()> cache;
  // Wall clock in ms for commit timestamps; empty: the system clock.
  std::function<timestamp_ms()> clock;
  // How often the coordinator compares the partitions of __consumer_offsets this node leads with
  // those it has loaded: it loads the ones it took over, so the first request after a failover
  // finds them ready, and forgets the ones it lost.
  // The same tick expires group members' sessions and ends join phases (group_membership).
  std::chrono::milliseconds leadership_check_interval{200};
  group_limits limits;
  // offsets.retention.minutes and offsets.retention.check.interval.ms (docs/groups.md,
  // "Expiry").
  std::chrono::milliseconds offsets_retention{std::chrono::minutes(10080)};
  std::chrono::milliseconds offsets_retention_check_interval{600000};
  // Where the coordinator's metrics go (docs/metrics.md, "Groups"); none: not kept.
  std::shared_ptr<metrics_registry> metrics;
};

group_coordinator_actor spawn_group_coordinator(caf::actor_system& sys,
                                                group_coordinator_options options);

} // namespace capstan
