#pragma once

// A leader node's end of one remote follower's replica fetcher (Kafka's handling of a follower
// FetchRequest in ReplicaManager.fetchMessages, plus its DelayedFetch). The replica manager
// spawns one per fetcher that asks; it quits when that fetcher goes away. Its protocol is
// fetch_session_actor in replication_messages.hpp.
//
// A Fetch is fanned out to the local partition replicas, which record the follower's position
// (its fetch offset is its log end offset) and read from it. If fewer than minBytes came back
// and maxWaitMs > 0, the session parks the fetch: replicas that had nothing notify it when data
// arrives and it reads again; at the deadline it answers with what there is. The answer
// references the stored bytes (no copy) and holds them until it is sent.

#include <functional>

#include <caf/fwd.hpp>

#include "actors/replica/replica_messages.hpp"
#include "actors/replica/replication_messages.hpp"

namespace capstan {

struct fetch_session_options {
  node_id node{0};     // this (leader) node
  node_id follower{0}; // the fetcher's node
  caf::actor fetcher;  // monitored: the session ends with it
  std::function<routing_table_ptr()> routes;
  // A follower cannot park a fetch longer than this.
  int32_t max_wait_cap_ms = 30000;
};

fetch_session_actor spawn_fetch_session(caf::actor_system& sys, fetch_session_options options);

} // namespace capstan
