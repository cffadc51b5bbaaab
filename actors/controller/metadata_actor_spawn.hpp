#pragma once

// Spawns the metadata actor (protocol in actors/controller/metadata_actor.hpp) over its durable
// store (runtime/cluster/metadata_store.hpp).

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <caf/fwd.hpp>

#include "actors/controller/metadata_actor.hpp"
#include "runtime/cluster/metadata.hpp"
#include "runtime/cluster/topic_validation.hpp"
#include "runtime/result.hpp"
#include "runtime/storage/log_config.hpp"

namespace capstan {

struct metadata_actor_options {
  std::filesystem::path store_file;
  // The data dir's cluster id (meta.properties). A new store takes it; a store of another cluster
  // is refused.
  std::string cluster_id;
  // This node: the controller id of every snapshot.
  int32_t node_id = 1;
  // Broker defaults that describe overlays with a topic's overrides.
  log_config log_defaults;
  int32_t min_insync_replicas = 1;
  // The live brokers a snapshot lists. Called on the actor's thread for every snapshot, so it
  // must not block; the node returns itself at its client listener's address once that is
  // bound. Unset: this node alone at 127.0.0.1:0.
  std::function<std::vector<broker_info>()> live_brokers;
};

// Loads the store (creating it with the cluster id when missing), then spawns the actor. It does
// not apply the loaded snapshot by itself: the node fetches it (snapshot_atom) and applies it to
// the replica manager before it serves. Errors: KAFKA_STORAGE_ERROR when the store cannot be read
// or written, or belongs to another cluster.
result<metadata_actor> spawn_metadata_actor(caf::actor_system& sys, metadata_actor_options options);

} // namespace capstan
