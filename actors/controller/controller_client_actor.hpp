#pragma once

// A node's way to the active controller for clients' topic changes and producer ids: the
// gateway's createTopic, deleteTopic, alterConfigs, createPartitions, electLeaders,
// reassignPartitions, unregisterNode, addVoter, removeVoter and initProducerId on any node come
// here and go on, as CreateTopic / DeleteTopic / AlterConfigs / CreatePartitions / ElectLeaders /
// AlterPartitionReassignments / UnregisterBroker / AddVoter / RemoveVoter / AllocateProducerIds
// frames (schema/controller.capnp), to the voters' node endpoints. It asks one voter at a time:
// first the one that last answered as the active controller (or that a refusal named), then the
// leader hint of a NOT_CONTROLLER answer (at once the first time, after retry_backoff after
// that), and the voters in turn when there is none (an election is under way, or the voter is
// down), until one answers otherwise or the request's time is up. Requests are independent:
// several may be out at once.
//
// It also describes the quorum for `cluster describe`: it asks every voter for its VoterState at
// once, each within attempt_timeout to find the voter's endpoint plus attempt_timeout for its
// answer, and merges the answers (merge_voter_answers); a voter that does not answer in time is
// unreachable in the description, it never holds up the others.

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include <caf/atom.hpp>
#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/controller/controller_codec.hpp"
#include "actors/controller/metadata_actor.hpp"
#include "actors/replica/node_endpoint_actor.hpp"
#include "runtime/cluster/cluster_description.hpp"
#include "runtime/cluster/metadata.hpp"

namespace capstan {

using cretry_atom = caf::atom_constant<caf::atom("cretry")>;
inline constexpr cretry_atom cretry_atom_v{};

using election_targets = std::vector<election_target>;
using election_outcomes = std::vector<election_outcome>;
using reassignment_items = std::vector<reassignment_item>;

// Errors: the controller's own answer (INVALID_*, TOPIC_ALREADY_EXISTS, POLICY_VIOLATION,
// UNKNOWN_TOPIC_OR_PARTITION ...); REQUEST_TIMED_OUT naming the last refusal when no active
// controller answered within the request timeout.
using controller_client_actor = caf::typed_actor<
    // Creates the topic; replies its name and topic id (no partitions: the controller's
    // UpdateMetadata brings those to the metadata cache).
    caf::replies_to<mktopic_atom, topic_spec>::with<topic_metadata>,
    caf::replies_to<rmtopic_atom, std::string>::with<bool>,
    // Sets the named configs of the topic and removes the overrides of the listed keys (its other
    // overrides stay).
    caf::replies_to<altercfg_atom, std::string, std::map<std::string, std::string>,
                    std::vector<std::string>>::with<bool>,
    // Grows the topic to this many partitions (CreatePartitions).
    caf::replies_to<mkparts_atom, std::string, int32_t>::with<bool>,
    // Preferred leader election of these partitions (none: all): one outcome per partition.
    caf::replies_to<elect_atom, election_targets>::with<election_outcomes>,
    // Reassignment (or its cancel) of these partitions: one outcome per partition.
    caf::replies_to<reassign_atom, reassignment_items>::with<election_outcomes>,
    // Unregisters the node with this id (UnregisterBroker).
    caf::replies_to<unregister_atom, int32_t>::with<bool>,
    // Adds node `id`, whose controller listens at the endpoint (HOST:PORT), to the controller
    // quorum's voters, or removes it (AddVoter, RemoveVoter); answered once the new voter set
    // committed. DUPLICATE_VOTER, VOTER_NOT_FOUND, INVALID_REQUEST, REQUEST_TIMED_OUT.
    caf::replies_to<add_voter_atom, int32_t, std::string>::with<bool>,
    caf::replies_to<remove_voter_atom, int32_t>::with<bool>,
    // initProducerId: the next id of the block this node holds; when it is used up, the node
    // asks the active controller for the next block (AllocateProducerIds) first, once for all
    // the requests waiting meanwhile.
    caf::replies_to<initpid_atom>::with<int64_t>,
    // Asks every voter; never an error (unanswered voters are unreachable in the description).
    caf::replies_to<descquorum_atom>::with<cluster_description_ptr>,
    // The pending request with this id is due for its next attempt (its own timer).
    caf::reacts_to<cretry_atom, uint64_t>>;

struct controller_client_options {
  node_id node{0};
  // The controller quorum's voters and where their node endpoints are.
  std::vector<peer_address> voters;
  // Reaches the voters' endpoints (told their addresses by the node at start).
  peer_directory_actor peers;
  // This node's own endpoint, for when it is a voter itself.
  node_endpoint_actor self_endpoint;
  // A whole request, retries included.
  std::chrono::milliseconds request_timeout{30000};
  // One attempt at one voter.
  std::chrono::milliseconds attempt_timeout{5000};
  // One attempt of a voter change, which the active controller answers only once it committed:
  // above its own bound (controller_options::voter_change_timeout), within request_timeout.
  std::chrono::milliseconds voter_change_timeout{22000};
  // The pause before the next attempt after a refusal or a failure.
  std::chrono::milliseconds retry_backoff{100};
};

// REQUIRES: options.voters non-empty.
controller_client_actor spawn_controller_client(caf::actor_system& sys,
                                                controller_client_options options);

} // namespace capstan

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::election_targets)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::election_outcomes)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::reassignment_items)
