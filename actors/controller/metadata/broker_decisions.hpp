#pragma once

// Decisions about nodes (decision.hpp): registration, fencing and unfencing. The actor fences a
// node when its session expires (broker_sessions.hpp) and unfences it when a heartbeat of its
// current registration says it is ready.

#include <string>

#include "actors/controller/metadata/decision.hpp"
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
};

// KRaft's registerBroker. Refuses:
// - INCONSISTENT_CLUSTER_ID: the request's cluster id is not the image's;
// - DUPLICATE_BROKER_REGISTRATION: the node id is registered with another incarnation whose
//   session is alive (`session_alive`, from broker_sessions: that process still heartbeats,
//   fenced or not, as KRaft's hasValidSession);
// - INVALID_REQUEST: a negative node id, an empty host or a port 0.
// Otherwise a RegisterBroker with an epoch above every earlier one; the node is fenced until
// unfence_broker. A registration that replaces an unfenced one is preceded by fence_broker's
// records for the old one, so no partition keeps a fenced leader or ISR member.
result<decision> register_broker(const metadata_image& image,
                                 const broker_registration_request& request, bool session_alive,
                                 const decision_options& options);

// STALE_BROKER_EPOCH unless `epoch` is the node's current registration (a heartbeat or request of
// an older process, or of a node that never registered).
status check_broker_epoch(const metadata_image& image, node_id node, broker_epoch epoch);

// KRaft's handleBrokerFenced: the node leaves every ISR it is in (but as the last member), every
// partition it led gets a new leader by the election rules (leader_election.hpp), then
// FenceBroker. Empty when the node is fenced already. STALE_BROKER_EPOCH as check_broker_epoch.
result<decision> fence_broker(const metadata_image& image, node_id node, broker_epoch epoch,
                              const decision_options& options);

// KRaft's handleBrokerUnfenced: UnfenceBroker, then a leader for each offline partition of which
// the node is a replica, if the election rules now find one. Empty when the node is unfenced
// already. STALE_BROKER_EPOCH as check_broker_epoch.
result<decision> unfence_broker(const metadata_image& image, node_id node, broker_epoch epoch,
                                const decision_options& options);

// KRaft's handleDirectoriesOffline, per replica: for each of `offline` (replicas the node reports
// it cannot serve), the node leaves the partition's ISR (but as the last member) and, if it led,
// the partition gets a new leader by the election rules, exactly as fence_broker does for all of
// a fenced node's partitions. Replicas of unknown topics or partitions (deleted since) and
// partitions already without the node are skipped. STALE_BROKER_EPOCH as check_broker_epoch.
result<decision> take_replicas_offline(const metadata_image& image, node_id node,
                                       broker_epoch epoch, const offline_replicas& offline,
                                       const decision_options& options);

} // namespace capstan::controller
