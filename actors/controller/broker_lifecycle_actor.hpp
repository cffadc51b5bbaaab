#pragma once

// A node's registration with the active controller: registers, then heartbeats every
// broker.heartbeat.interval.ms, finding the active controller among the quorum's voters and
// following their leader hints (broker_lifecycle.hpp has the rules). Every heartbeat names the
// replicas the node cannot serve, so the controller moves their leadership and ISR elsewhere.
// Requests go to the voters' node endpoints (schema/controller.capnp frames); a registration or
// a controlled shutdown waits at most request_timeout, a heartbeat at most one heartbeat interval.
// Each registration names the incarnation the node's data dir registered with before, and the
// first accepted one is kept there for the next process.
//
// The node's AlterPartition needs nothing from it: the replica manager sends those to whoever
// sent it the latest LeaderAndIsr, which is the active controller.

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/controller/broker_lifecycle.hpp"
#include "actors/controller/metadata/metadata_types.hpp"
#include "actors/replica/node_endpoint_actor.hpp"
#include "actors/replica/replica_atoms.hpp"
#include "runtime/cluster/offline_replicas.hpp"

namespace capstan {

using lctick_atom = caf::atom_constant<caf::atom("lctick")>;
inline constexpr lctick_atom lctick_atom_v{};

struct broker_lifecycle_status {
  int64_t broker_epoch = -1; // -1: not registered
  bool fenced = true;
  node_id controller{-1}; // where the last request went
};

using broker_lifecycle_actor =
    caf::typed_actor<caf::replies_to<status_atom>::with<broker_lifecycle_status>,
                     // KRaft's controlled shutdown: asks the active controller to move this
                     // node's leaderships now and stops heartbeating. True iff it confirmed;
                     // follows NOT_CONTROLLER to where it points (or the next voter) and is
                     // answered within 4 s.
                     caf::replies_to<stop_atom>::with<bool>,
                     // The next request is due (its own timer).
                     caf::reacts_to<lctick_atom>>;

struct broker_lifecycle_options {
  node_id node{0};
  // All zeros: drawn at spawn (a new process is a new incarnation).
  controller::incarnation_id incarnation{};
  // The incarnation the node's data dir last registered with (all zeros: none known), named in
  // every registration so that the controller replaces that one at once.
  controller::incarnation_id previous_incarnation{};
  // That process stopped cleanly (runtime/cluster/clean_shutdown.hpp).
  bool previous_clean_shutdown = false;
  // The data dir whose node.incarnation (runtime/cluster/incarnation_file.hpp) gets this
  // incarnation once a registration was accepted, written by an I/O worker of its own; empty:
  // not kept.
  std::filesystem::path data_dir;
  // Called once, on the actor's thread, when the cluster refuses the node for good
  // (broker_lifecycle::refusal): the node should stop. The lifecycle sends nothing more.
  std::function<void(const error&)> on_refused;
  std::string cluster_id;
  std::string client_host;
  uint16_t client_port = 0;
  std::string cluster_host;
  uint16_t cluster_port = 0;
  std::string rack;
  // The node's advertised Kafka listener; port 0: none.
  std::string kafka_host;
  uint16_t kafka_port = 0;
  // The controller quorum's voters and where their node endpoints are.
  std::vector<peer_address> voters;
  // Reaches the voters' endpoints (told their addresses at spawn).
  peer_directory_actor peers;
  // This node's own endpoint, for when it is a voter itself.
  node_endpoint_actor self_endpoint;
  broker_lifecycle_timing timing;
  // For registrations and the controlled shutdown; heartbeats wait at most timing's interval.
  std::chrono::milliseconds request_timeout{2000};
  // The replicas the replica manager cannot serve, reported in every heartbeat; may be null.
  std::shared_ptr<const offline_replica_registry> offline;
  // The logs of the replicas whose partition has no leader, reported in every heartbeat; may be
  // null.
  std::shared_ptr<const leaderless_replica_registry> leaderless;
};

// REQUIRES: options.voters non-empty.
broker_lifecycle_actor spawn_broker_lifecycle(caf::actor_system& sys,
                                              broker_lifecycle_options options);

} // namespace capstan

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::broker_lifecycle_status)
