#pragma once

// The fetcher manager (Kafka's ReplicaFetcherManager): one per node. It places each followed
// partition on a replica fetcher, keyed by the leader's node and the fetcher index
// abs(31 * hash(topic) + partition) % num.replica.fetchers, starts fetchers as needed, moves a
// partition when its leader changes, and stops fetchers left without partitions.

#include <caf/fwd.hpp>

#include "actors/replica/replica_fetcher_actor.hpp"

namespace capstan {

using fetcher_manager_actor = caf::typed_actor<
  // Follow these partitions from `leader` (node id). Replies once they are sent to their fetchers.
  caf::replies_to<assign_atom, int32_t, std::vector<fetch_assignment>>::with<bool>,
  // Stop following them (answers in flight for them are dropped when they arrive).
  caf::replies_to<unassign_atom, std::vector<topic_partition>>::with<bool>,
  // Stops every fetcher; replies when they are gone.
  caf::replies_to<stop_atom>::with<bool>>;

struct fetcher_manager_options {
  node_id node{0};
  int32_t num_fetchers = 1; // num.replica.fetchers
  // This process's incarnation, named in every fetch (all zeros: none).
  incarnation_bytes incarnation{};
  replica_fetcher_config config;
  session_provider sessions;
  std::function<routing_table_ptr()> routes;
};

fetcher_manager_actor spawn_fetcher_manager(caf::actor_system& sys, fetcher_manager_options options);

} // namespace capstan
