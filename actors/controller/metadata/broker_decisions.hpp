#pragma once

// Decisions about nodes (decision.hpp): registration, fencing and unfencing. The actor fences a
// node when its session expires (broker_sessions.hpp) and unfences it when a heartbeat of its
// current registration says it is ready; later heartbeats elect leaders where a partition waits
// for one (elect_leaderless).

#include <string>

#include "actors/controller/metadata/decision.hpp"
#include "actors/controller/metadata/leader_election.hpp"
#include "actors/controller/metadata/metadata_image.hpp"
#include "runtime/cluster/offline_replicas.hpp"
#include "runtime/result.hpp"

namespace capstan::controller {

struct broker_registration_request {
  node_id node;
  incarnation_id incarnation{};
  std::string cluster_id;
  std::string client_host;
  uint16_t client_port = 0;
  std::string cluster_host;
  uint16_t cluster_port = 0;
  std::string rack; // empty: none
  // The incarnation the last process on the node's data dir registered with; all zeros: none
  // known (a new data dir, or a node that does not say).
  incarnation_id previous_incarnation{};
  // That process stopped cleanly: its logs hold every record it acknowledged.
  bool previous_clean_shutdown = false;
  // The Kafka listener clients are sent to (advertised.listeners); port 0: the node has none.
  std::string kafka_host{};
  uint16_t kafka_port = 0;
};

// Which nodes the active controller has heard from since it became active (a heartbeat or a
// registration of their current registration, broker_sessions::heard_from); empty: every node.
// A decision elects a new leader only among unfenced nodes heard from: right after a
// whole-cluster restart the image still holds the unfenced registrations of processes that died,
// and a leadership moved there would be lost again when their successors register. A leader in
// place stays while it is unfenced, heard from or not. Unclean elections wait for every ISR
// member to be fenced, as before: one not heard from yet may still be the clean choice.
using heard_from = liveness;

// KRaft's registerBroker. Refuses:
// - INCONSISTENT_CLUSTER_ID: the request's cluster id is not the image's;
// - DUPLICATE_BROKER_REGISTRATION: the node id is registered with another incarnation whose
//   session is alive (`session_alive`, from broker_sessions: that process still heartbeats,
//   fenced or not, as KRaft's hasValidSession), and the request does not name it as its
//   previous incarnation;
// - INVALID_REQUEST: a negative node id, an empty host or a port 0.
// Otherwise a RegisterBroker with an epoch above every earlier one; the node is fenced until
// unfence_broker. A registration that replaces an unfenced one is preceded by the old one's
// fencing, in the same decision. When the request comes from the same data dir as the old one
// (the same incarnation, or the old one named as its previous incarnation; the data dir's lock
// makes that process gone), that fencing keeps the node in every ISR no other member is heard
// from in (its log is the same one, and it comes back with its first heartbeat), and elects no
// unclean leader; otherwise it is fence_broker's.
result<decision> register_broker(const metadata_image& image,
                                 const broker_registration_request& request, bool session_alive,
                                 const decision_options& options, const heard_from& heard = {});

// KRaft's unregisterBroker, for a node gone for good (after its partitions were moved off it with
// reassignments): UnregisterBroker of its current registration. Refuses BROKER_ID_NOT_REGISTERED
// for a node the image does not hold, and INVALID_REQUEST while the node is unfenced or its
// session is alive (`session_alive`, as register_broker): a live process would only register
// again; and while it is still in an ISR (as the last member, naming the partitions): a new
// machine registering the id with an empty disk would be elected there cleanly. Replicas the node
// still holds outside ISRs stay in their partitions, offline, until reassigned.
result<decision> unregister_broker(const metadata_image& image, node_id node, bool session_alive);

// STALE_BROKER_EPOCH unless `epoch` is the node's current registration (a heartbeat or request of
// an older process, or of a node that never registered).
status check_broker_epoch(const metadata_image& image, node_id node, broker_epoch epoch);

// KRaft's handleBrokerFenced: the node leaves every ISR it is in (but as the last member), every
// partition it led gets a new leader by the election rules (leader_election.hpp) among the nodes
// heard from, then FenceBroker. Empty when the node is fenced already. STALE_BROKER_EPOCH as
// check_broker_epoch.
result<decision> fence_broker(const metadata_image& image, node_id node, broker_epoch epoch,
                              const decision_options& options, const heard_from& heard = {});

// KRaft's handleBrokerUnfenced: UnfenceBroker, then a leader for each offline partition of which
// the node is a replica, if the election rules now find one (elect_leaderless). Empty when the
// node is unfenced already. STALE_BROKER_EPOCH as check_broker_epoch.
result<decision> unfence_broker(const metadata_image& image, node_id node, broker_epoch epoch,
                                const decision_options& options, const heard_from& heard = {});

// A leader for each leaderless partition of which the unfenced `node` is a replica, if the
// election rules find one among the unfenced nodes heard from (the node counts as heard). For a
// heartbeat: a partition left without a leader because its ISR had not been heard from gets one
// once they are. Empty when nothing changes. STALE_BROKER_EPOCH as check_broker_epoch.
result<decision> elect_leaderless(const metadata_image& image, node_id node, broker_epoch epoch,
                                  const decision_options& options, const heard_from& heard = {});

// KRaft's handleDirectoriesOffline, per replica: for each of `offline` (replicas the node reports
// it cannot serve), the node leaves the partition's ISR (but as the last member) and, if it led,
// the partition gets a new leader by the election rules, exactly as fence_broker does for all of
// a fenced node's partitions. Replicas of unknown topics or partitions (deleted since) and
// partitions already without the node are skipped. STALE_BROKER_EPOCH as check_broker_epoch.
result<decision> take_replicas_offline(const metadata_image& image, node_id node,
                                       broker_epoch epoch, const offline_replicas& offline,
                                       const decision_options& options,
                                       const heard_from& heard = {});

} // namespace capstan::controller
