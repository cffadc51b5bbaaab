#pragma once

// A stand-in for the controller quorum in replication tests: it keeps each partition's state
// (leader, epochs, ISR), sends LeaderAndIsr, UpdateMetadata and StopReplica frames to nodes'
// endpoints over the middleman, and answers leaders' AlterPartition the way a controller does
// (checks the leader and partition epochs, commits the new ISR with the partition epoch bumped).
// Every change it makes (topics, an election, a committed ISR) is followed by an UpdateMetadata
// of the whole state to every live node, which the nodes answer clients' Metadata from; a node
// whose endpoint went down is not live until it is connected again. Everything
// goes through the same frames a real controller sends.

#include <map>
#include <string>
#include <vector>

#include <caf/fwd.hpp>

#include "actors/replica/control_codec.hpp"
#include "actors/replica/node_endpoint_actor.hpp"

namespace capstan::test {

using elect_atom = caf::atom_constant<caf::atom("elect")>;
using stopat_atom = caf::atom_constant<caf::atom("stopat")>;
using state_atom = caf::atom_constant<caf::atom("state")>;
using connect_node_atom = caf::atom_constant<caf::atom("connectnd")>;
using topics_atom = caf::atom_constant<caf::atom("topics")>;

struct election {
  topic_partition tp;
  int32_t leader = -1;
  int32_t epoch = 0;
  std::vector<int32_t> replicas;
  std::vector<int32_t> isr;
  // Only these nodes get the LeaderAndIsr (empty: every replica).
  std::vector<int32_t> send_to;
};

// The controller's test interface (from the test thread) and its controller_sink side.
using test_controller_actor = caf::typed_actor<
  // Adds a node: its id, its endpoint (connected by the caller), its cluster port (for the
  // endpoints LeaderAndIsr names) and its client port (for UpdateMetadata, which clients are
  // answered from; 0 when the node serves no clients).
  caf::replies_to<connect_node_atom, int32_t, caf::actor, uint16_t, uint16_t>::with<bool>,
  // Topic configs for UpdateMetadata (sent to every node right away).
  caf::replies_to<topics_atom, std::vector<topic_config_msg>>::with<bool>,
  // Records the new state and sends LeaderAndIsr, then UpdateMetadata to every node (as Kafka's
  // controller follows a leader change); replies the nodes' LeaderAndIsr errors, if any.
  caf::replies_to<elect_atom, election>::with<std::vector<partition_error_msg>>,
  // StopReplica (keeping the data) for `tp` on one node.
  caf::replies_to<stopat_atom, topic_partition, int32_t>::with<bool>,
  // The committed state of a partition.
  caf::replies_to<state_atom, topic_partition>::with<partition_state_msg>,
  caf::replies_to<alterisr_atom, capnp_frame>::with<capnp_frame>>;

test_controller_actor spawn_test_controller(caf::actor_system& sys, int32_t controller_epoch = 1);

} // namespace capstan::test

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::test::election)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<capstan::topic_config_msg>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<capstan::partition_error_msg>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::partition_state_msg)
