#pragma once

// The metadata actor: a node's own metadata, which holds only its node-local __consumer_offsets
// (the controller holds every other topic). It persists the node's topics in the metadata store
// and applies each new snapshot to the replica manager before answering, so the offsets topic is
// served once created; and it answers metadata calls until the controller's first UpdateMetadata.

#include <map>
#include <string>
#include <vector>

#include <caf/atom.hpp>
#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/replica/replica_messages.hpp"
#include "runtime/cluster/metadata.hpp"

namespace capstan {

using create_atom = caf::atom_constant<caf::atom("create")>;
using describe_atom = caf::atom_constant<caf::atom("describe")>;
using snapshot_atom = caf::atom_constant<caf::atom("snapshot")>;
using initpid_atom = caf::atom_constant<caf::atom("initpid")>;
inline constexpr create_atom create_atom_v{};
inline constexpr describe_atom describe_atom_v{};
inline constexpr snapshot_atom snapshot_atom_v{};
inline constexpr initpid_atom initpid_atom_v{};

using config_map = std::map<std::string, std::string>;

// Errors: INVALID_TOPIC_EXCEPTION, TOPIC_ALREADY_EXISTS, INVALID_PARTITIONS (fewer than one),
// INVALID_REPLICATION_FACTOR, INVALID_CONFIG, POLICY_VIOLATION (more than 10,000 partitions; a
// node past max.broker.partitions), UNKNOWN_TOPIC_OR_PARTITION, KAFKA_STORAGE_ERROR (metadata
// could not be persisted, or a created topic's partitions did not all open: it names them, and
// the topic is removed again).
using metadata_actor =
    caf::typed_actor<caf::replies_to<create_atom, topic_spec>::with<topic_metadata>,
                     caf::replies_to<snapshot_atom>::with<metadata_snapshot>,
                     // Effective configs of a topic: broker defaults overlaid with its overrides.
                     caf::replies_to<describe_atom, std::string>::with<config_map>>;

} // namespace capstan

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::config_map)
