#pragma once

// The node endpoint: the one actor a node publishes on its cluster port, its face to the other
// nodes. A peer connects through the CAF middleman and gets this actor; everything it sends is a
// capnp_frame of schema/replication.capnp or a plain registered value, so it crosses processes.
// It opens fetch sessions for remote fetchers and hands the controller's requests to the local
// replica manager, the controller quorum's Raft messages to the local quorum member, and nodes'
// requests to the controller (registration, heartbeats, topic changes) to the local controller.
//
// peer_directory_actor is the other half: it finds the endpoints of other nodes (by node id, from
// the addresses the controller publishes), connects once, reconnects after a peer restarts, and
// opens fetch sessions there for local fetchers.

#include <functional>
#include <string>
#include <vector>

#include <caf/fwd.hpp>

#include "actors/replica/replica_messages.hpp"
#include "actors/replica/replication_messages.hpp"

namespace capstan {

using peers_atom = caf::atom_constant<caf::atom("peers")>;
using endpoint_atom = caf::atom_constant<caf::atom("endpoint")>;
using raft_atom = caf::atom_constant<caf::atom("raft")>;
using brokerreg_atom = caf::atom_constant<caf::atom("brokerreg")>;
using brokerhb_atom = caf::atom_constant<caf::atom("brokerhb")>;
using mktopic_atom = caf::atom_constant<caf::atom("mktopic")>;
using rmtopic_atom = caf::atom_constant<caf::atom("rmtopic")>;
using altercfg_atom = caf::atom_constant<caf::atom("altercfg")>;
using descquorum_atom = caf::atom_constant<caf::atom("descquorum")>;
using allocpid_atom = caf::atom_constant<caf::atom("allocpid")>;
using mkparts_atom = caf::atom_constant<caf::atom("mkparts")>;
using elect_atom = caf::atom_constant<caf::atom("elect")>;
using reassign_atom = caf::atom_constant<caf::atom("reassign")>;
using unregister_atom = caf::atom_constant<caf::atom("unregister")>;
using locate_atom = caf::atom_constant<caf::atom("locate")>;
// Voter changes: a node's AddVoter / RemoveVoter frame here, and the controller's own request to
// its quorum member (quorum_actor.hpp).
using add_voter_atom = caf::atom_constant<caf::atom("addvoter")>;
using remove_voter_atom = caf::atom_constant<caf::atom("rmvoter")>;
inline constexpr peers_atom peers_atom_v{};
inline constexpr endpoint_atom endpoint_atom_v{};
inline constexpr raft_atom raft_atom_v{};
inline constexpr brokerreg_atom brokerreg_atom_v{};
inline constexpr brokerhb_atom brokerhb_atom_v{};
inline constexpr mktopic_atom mktopic_atom_v{};
inline constexpr rmtopic_atom rmtopic_atom_v{};
inline constexpr altercfg_atom altercfg_atom_v{};
inline constexpr descquorum_atom descquorum_atom_v{};
inline constexpr allocpid_atom allocpid_atom_v{};
inline constexpr mkparts_atom mkparts_atom_v{};
inline constexpr elect_atom elect_atom_v{};
inline constexpr reassign_atom reassign_atom_v{};
inline constexpr unregister_atom unregister_atom_v{};
inline constexpr locate_atom locate_atom_v{};
inline constexpr add_voter_atom add_voter_atom_v{};
inline constexpr remove_voter_atom remove_voter_atom_v{};

// A node's requests to the active controller (schema/controller.capnp): BrokerRegistration,
// BrokerHeartbeat, CreateTopic, DeleteTopic, AlterConfigs, CreatePartitions, ElectLeaders,
// AlterPartitionReassignments, UnregisterBroker, AddVoter, RemoveVoter, AllocateProducerIds, each
// answered with its
// response frame; and DescribeQuorum, answered with the voter's VoterState.
using controller_request_sink =
    caf::typed_actor<caf::replies_to<brokerreg_atom, capnp_frame>::with<capnp_frame>,
                     caf::replies_to<brokerhb_atom, capnp_frame>::with<capnp_frame>,
                     caf::replies_to<mktopic_atom, capnp_frame>::with<capnp_frame>,
                     caf::replies_to<rmtopic_atom, capnp_frame>::with<capnp_frame>,
                     caf::replies_to<altercfg_atom, capnp_frame>::with<capnp_frame>,
                     caf::replies_to<allocpid_atom, capnp_frame>::with<capnp_frame>,
                     caf::replies_to<mkparts_atom, capnp_frame>::with<capnp_frame>,
                     caf::replies_to<elect_atom, capnp_frame>::with<capnp_frame>,
                     caf::replies_to<reassign_atom, capnp_frame>::with<capnp_frame>,
                     caf::replies_to<unregister_atom, capnp_frame>::with<capnp_frame>,
                     caf::replies_to<add_voter_atom, capnp_frame>::with<capnp_frame>,
                     caf::replies_to<remove_voter_atom, capnp_frame>::with<capnp_frame>,
                     caf::replies_to<descquorum_atom>::with<capnp_frame>>;

using node_endpoint_actor = caf::typed_actor<
    // A fetcher on node `follower` asks for a session here: replies the fetch session (a
    // fetch_session_actor, sent as caf::actor because only registered types cross nodes).
    caf::replies_to<open_atom, int32_t, caf::actor>::with<caf::actor>,
    // The controller's LeaderAndIsr, UpdateMetadata and StopReplica; each answered with its
    // response frame (UpdateMetadata: the empty frame).
    caf::replies_to<leaderisr_atom, capnp_frame>::with<capnp_frame>,
    caf::replies_to<metadata_atom, capnp_frame>::with<capnp_frame>,
    caf::replies_to<stopreplica_atom, capnp_frame>::with<capnp_frame>,
    // A controller quorum member's Raft message (schema/raft.capnp), for this node's member. One
    // way: Raft tolerates loss, so nothing is answered or acknowledged.
    caf::reacts_to<raft_atom, capnp_frame>,
    // A node's request to the controller, for this node's controller actor: answered by it, or
    // refused with NOT_CONTROLLER (a caf::error) when this node runs none.
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
    caf::replies_to<add_voter_atom, capnp_frame>::with<capnp_frame>,
    caf::replies_to<remove_voter_atom, capnp_frame>::with<capnp_frame>,
    // DescribeQuorum from node `from` (the frames above name their sender themselves).
    caf::replies_to<descquorum_atom, int32_t>::with<capnp_frame>,
    // Node `from` asks where node `id`'s cluster listener is, as this node's directory knows it
    // (peer_directory_actor below): host and port, or an error when it does not know.
    caf::replies_to<locate_atom, int32_t, int32_t>::with<std::string, uint16_t>>;

// Where the endpoint hands Raft messages (the node's controller quorum actor).
using raft_sink = caf::typed_actor<caf::reacts_to<raft_atom, capnp_frame>>;

// Where the endpoint hands the controller's requests (the replica manager).
using control_sink =
    caf::typed_actor<caf::replies_to<leaderisr_atom, capnp_frame>::with<capnp_frame>,
                     caf::replies_to<metadata_atom, capnp_frame>::with<capnp_frame>,
                     caf::replies_to<stopreplica_atom, capnp_frame>::with<capnp_frame>>;

struct peer_address {
  node_id node{0};
  std::string host;
  uint16_t port = 0; // the peer's cluster port
};

using peer_directory_actor =
    caf::typed_actor<caf::replies_to<session_atom, node_id, caf::actor>::with<fetch_session_actor>,
                     // The peer's node endpoint, connecting first if needed. A node whose
                     // address the directory does not know is first located: every peer it
                     // knows is asked (locate_atom) and the first address named is taken.
                     caf::replies_to<endpoint_atom, node_id>::with<node_endpoint_actor>,
                     // Where peers are now (replaces what was known for these nodes).
                     caf::reacts_to<peers_atom, std::vector<peer_address>>,
                     // Where a node listens, if this directory knows (it asks nobody).
                     caf::replies_to<locate_atom, node_id>::with<std::string, uint16_t>>;

struct node_endpoint_options {
  node_id node{0};
  std::function<routing_table_ptr()> routes;
  // Empty: control requests are refused (a node that replicates only, in tests).
  control_sink control;
  // Empty: Raft messages are dropped (a node that is no controller).
  raft_sink raft;
  // Empty: nodes' controller requests are refused with NOT_CONTROLLER (a node that is no
  // controller quorum voter).
  controller_request_sink controller;
  // Answers other nodes' locate requests; empty: they are refused.
  peer_directory_actor directory;
  int32_t max_fetch_wait_ms = 30000;
};

node_endpoint_actor spawn_node_endpoint(caf::actor_system& sys, node_endpoint_options options);

struct peer_directory_options {
  node_id node{0};
  // This node's own endpoint: sessions with a leader on this node open here without a hop.
  node_endpoint_actor self_endpoint;
  std::vector<peer_address> peers;
};

peer_directory_actor spawn_peer_directory(caf::actor_system& sys, peer_directory_options options);

} // namespace capstan

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<capstan::peer_address>)
