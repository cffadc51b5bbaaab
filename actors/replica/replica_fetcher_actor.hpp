#pragma once

// A replica fetcher (Kafka's ReplicaFetcherThread): pulls the partitions this node follows from
// one leader node. Its protocol is replica_fetcher_actor in replication_messages.hpp; the fetcher
// manager assigns and unassigns partitions. Each round it first truncates the partitions that
// need it (OffsetsForLeaderEpoch to the leader, then the local replica truncates by epoch), then
// sends one Fetch for every partition ready to fetch, appends what comes back through the local
// replicas, and fetches again at once (the leader long-polls). Errors back off the partition
// they concern by replica.fetch.backoff.ms while the others go on.

#include <chrono>
#include <functional>

#include <caf/fwd.hpp>

#include "actors/replica/replica_fetcher_config.hpp"
#include "actors/replica/replica_messages.hpp"
#include "actors/replica/replication_messages.hpp"

namespace capstan {

struct replica_fetcher_options {
  node_id node{0};   // this node
  node_id leader{0}; // the node it fetches from
  int32_t index = 0; // of num.replica.fetchers
  // This process's incarnation, named in every fetch (all zeros: none).
  incarnation_bytes incarnation{};
  replica_fetcher_config config;
  // Opens fetch sessions on the leader (the replica manager).
  session_provider sessions;
  std::function<routing_table_ptr()> routes;
};

replica_fetcher_actor spawn_replica_fetcher(caf::actor_system& sys, replica_fetcher_options options);

} // namespace capstan
