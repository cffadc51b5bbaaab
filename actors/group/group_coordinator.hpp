#pragma once

// Spawns the group coordinator (protocol: group_coordinator_actor in group_coordinator_actor.hpp).
// It keeps committed offsets in __consumer_offsets, whose replicas it finds through the replica
// manager; the node creates that topic (cleanup.policy=compact) before the first request.

#include <functional>

#include <caf/fwd.hpp>

#include "actors/group/group_coordinator_actor.hpp"
#include "actors/replica/replica_messages.hpp"

namespace capstan {

struct group_coordinator_options {
  replica_manager_actor replicas;
  // offsets.topic.num.partitions: must match the topic, or groups map to other partitions.
  int32_t offsets_partitions = 1;
  // Wall clock in ms for commit timestamps; empty: the system clock.
  std::function<timestamp_ms()> clock;
};

// REQUIRES: options.offsets_partitions >= 1.
group_coordinator_actor spawn_group_coordinator(caf::actor_system& sys,
                                                group_coordinator_options options);

} // namespace capstan
