#pragma once

// The controller actor: one per controller quorum voter, beside its quorum actor
// (docs/controller.md, "The active controller"). It polls its quorum member and is the active
// controller while that member leads the quorum and has applied its whole log. While active it
// answers nodes' registrations and heartbeats, fences nodes whose session ran out, creates and
// deletes topics, changes their configs, adds partitions, elects preferred leaders (on request
// and periodically), allocates producer id blocks, and answers leaders'
// AlterPartition, each by proposing a decision's records (active_controller.hpp) and, once they
// committed, sending the control messages the change calls for to the nodes' endpoints, stamped
// with its Raft term as controller epoch. While not active it refuses every request with
// NOT_CONTROLLER and the leader its member knows of. Voter changes (AddVoter, RemoveVoter) go
// straight to its quorum member, which refuses them the same way unless it leads the quorum.
//
// Requests are decided one at a time, in arrival order (a queue); see active_controller.hpp.

#include <chrono>
#include <cstdint>
#include <optional>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/controller/metadata/broker_sessions.hpp"
#include "actors/controller/metadata/decision.hpp"
#include "actors/controller/metadata/topic_decisions.hpp"
#include "actors/controller/quorum_actor.hpp"
#include "actors/replica/node_endpoint_actor.hpp"

namespace capstan {

using ctick_atom = caf::atom_constant<caf::atom("ctick")>;
inline constexpr ctick_atom ctick_atom_v{};
using rebalance_atom = caf::atom_constant<caf::atom("rebalance")>;
inline constexpr rebalance_atom rebalance_atom_v{};
using import_atom = caf::atom_constant<caf::atom("import")>;
inline constexpr import_atom import_atom_v{};
using gauges_atom = caf::atom_constant<caf::atom("gauges")>;
inline constexpr gauges_atom gauges_atom_v{};

// Kafka's controller gauges as this controller sees them (docs/metrics.md): ActiveControllerCount
// and, while active, OfflinePartitionsCount of its committed image (0 while not active).
struct controller_gauges {
  bool active = false;
  int64_t offline_partitions = 0;
};

using controller_actor = caf::typed_actor<
    // Nodes' requests (schema/controller.capnp), from a node endpoint.
    caf::replies_to<brokerreg_atom, capnp_frame>::with<capnp_frame>,
    caf::replies_to<brokerhb_atom, capnp_frame>::with<capnp_frame>,
    caf::replies_to<mktopic_atom, capnp_frame>::with<capnp_frame>,
    caf::replies_to<rmtopic_atom, capnp_frame>::with<capnp_frame>,
    caf::replies_to<altercfg_atom, capnp_frame>::with<capnp_frame>,
    caf::replies_to<allocpid_atom, capnp_frame>::with<capnp_frame>,
    caf::replies_to<mkparts_atom, capnp_frame>::with<capnp_frame>,
    caf::replies_to<elect_atom, capnp_frame>::with<capnp_frame>,
    caf::replies_to<reassign_atom, capnp_frame>::with<capnp_frame>,
    caf::replies_to<unregister_atom, capnp_frame>::with<capnp_frame>,
    // AddVoter and RemoveVoter, answered with a TopicResponse once the quorum member's voter set
    // entry committed, or with why not (voter_change_answer).
    caf::replies_to<add_voter_atom, capnp_frame>::with<capnp_frame>,
    caf::replies_to<remove_voter_atom, capnp_frame>::with<capnp_frame>,
    // A single node's topics from before it ran a quorum (local; answered as a CreateTopic).
    caf::replies_to<import_atom, controller::import_topics_msg>::with<capnp_frame>,
    // A node's DescribeQuorum: this voter's VoterState (describe_voter), active or not.
    caf::replies_to<descquorum_atom>::with<capnp_frame>,
    // The node's metrics refresher (local).
    caf::replies_to<gauges_atom>::with<controller_gauges>,
    // A leader's AlterPartition, from its replica manager (which sends it to the sender of the
    // latest control request it accepted: this actor, while active).
    caf::replies_to<alterisr_atom, capnp_frame>::with<capnp_frame>,
    // This node's own endpoint, where its control messages go (the peer directory reaches only
    // other nodes); spawned after this actor, so it comes as a message.
    caf::reacts_to<endpoint_atom, node_endpoint_actor>,
    // The poll timer.
    caf::reacts_to<ctick_atom>,
    // The periodic preferred leader election's timer (auto.leader.rebalance.enable).
    caf::reacts_to<rebalance_atom>>;

struct controller_options {
  node_id node{0};
  quorum_actor quorum;
  // Reaches the other nodes' endpoints; the controller tells it where registered nodes are.
  peer_directory_actor peers;
  controller::decision_options decisions;
  // Kafka's broker.session.timeout.ms.
  std::chrono::milliseconds session_timeout{controller::default_broker_session_timeout_ms};
  // How often the actor asks its quorum member whether it leads, and checks sessions. Short, as
  // it bounds how long a new quorum leader waits to become the active controller (a handed-over
  // leadership takes one round trip); the question is a local message.
  std::chrono::milliseconds poll_interval{50};
  // Bounds each request to the quorum member and each control message to a node.
  std::chrono::milliseconds request_timeout{5000};
  // Bounds a proposal's wait for its commit; after it the outcome is unknown
  // (REQUEST_TIMED_OUT) and the actor starts afresh from the committed image.
  std::chrono::milliseconds propose_timeout{10000};
  // Bounds a voter change's wait for its quorum member: above the member's own bound on an added
  // voter's catch-up (15 s), so the member's answer, not this timeout, says why a change failed.
  std::chrono::milliseconds voter_change_timeout{20000};
  // auto.leader.rebalance.enable with leader.imbalance.check.interval.seconds: while active, the
  // actor queues a preferred leader election of the imbalanced partitions (imbalanced_partitions,
  // with leader.imbalance.per.broker.percentage) this often. None: never.
  std::optional<std::chrono::milliseconds> rebalance_interval{std::chrono::seconds(300)};
  int32_t imbalance_percentage = 10;
  // Seeds topic ids and replica placement; none: drawn from std::random_device.
  std::optional<uint64_t> seed;
};

controller_actor spawn_controller_actor(caf::actor_system& sys, controller_options options);

} // namespace capstan

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::controller_gauges)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::controller::import_topics_msg)
