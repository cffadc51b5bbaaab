#pragma once

// The metadata actor: the controller's state machine for topics (with one node, the quorum of
// one). It validates and persists topic changes, then applies each new snapshot to the replica
// manager before answering, so a topic is usable when createTopic returns.

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
using alter_atom = caf::atom_constant<caf::atom("alter")>;
using snapshot_atom = caf::atom_constant<caf::atom("snapshot")>;
using initpid_atom = caf::atom_constant<caf::atom("initpid")>;
using grow_atom = caf::atom_constant<caf::atom("grow")>;
inline constexpr create_atom create_atom_v{};
inline constexpr describe_atom describe_atom_v{};
inline constexpr alter_atom alter_atom_v{};
inline constexpr snapshot_atom snapshot_atom_v{};
inline constexpr initpid_atom initpid_atom_v{};
inline constexpr grow_atom grow_atom_v{};

using config_map = std::map<std::string, std::string>;

// Errors: INVALID_TOPIC_EXCEPTION, TOPIC_ALREADY_EXISTS, INVALID_PARTITIONS (fewer than one),
// INVALID_REPLICATION_FACTOR, INVALID_CONFIG, POLICY_VIOLATION (internal topics cannot be
// deleted by clients; more than 10,000 partitions; a node past max.broker.partitions),
// UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_SERVER_ERROR (producer ids used up), KAFKA_STORAGE_ERROR
// (metadata could not be persisted, or a created topic's partitions did not all open: it names
// them, and the topic is removed again).
using metadata_actor =
    caf::typed_actor<caf::replies_to<create_atom, topic_spec>::with<topic_metadata>,
                     caf::replies_to<delete_atom, std::string>::with<bool>,
                     caf::replies_to<snapshot_atom>::with<metadata_snapshot>,
                     // Effective configs of a topic: broker defaults overlaid with its overrides.
                     caf::replies_to<describe_atom, std::string>::with<config_map>,
                     // Sets these overrides and removes those of the listed keys.
                     caf::replies_to<alter_atom, std::string, config_map,
                                     std::vector<std::string>>::with<bool>,
                     // createPartitions: grows the topic to this many partitions (INVALID_PARTITIONS
                     // unless more than it has), placed as createTopic places them; the new ones
                     // serve when it returns (or it fails with KAFKA_STORAGE_ERROR naming them).
                     caf::replies_to<grow_atom, std::string, int32_t>::with<bool>,
                     // initProducerId: a producer id never handed out before (docs/controller.md,
                     // "Producer ids"), from a block of them persisted in the store before any is
                     // handed out.
                     caf::replies_to<initpid_atom>::with<int64_t>>;

} // namespace capstan

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::config_map)
