#pragma once

// The metadata actor: a node's own metadata, as its store (cluster-metadata.toml) holds it: the
// cluster id, and no topic once an earlier version's have moved to the controller (which holds
// every topic). It answers metadata calls until the controller's first UpdateMetadata.

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

using describe_atom = caf::atom_constant<caf::atom("describe")>;
using snapshot_atom = caf::atom_constant<caf::atom("snapshot")>;
using initpid_atom = caf::atom_constant<caf::atom("initpid")>;
inline constexpr describe_atom describe_atom_v{};
inline constexpr snapshot_atom snapshot_atom_v{};
inline constexpr initpid_atom initpid_atom_v{};

using config_map = std::map<std::string, std::string>;

// Errors: UNKNOWN_TOPIC_OR_PARTITION.
using metadata_actor =
    caf::typed_actor<caf::replies_to<snapshot_atom>::with<metadata_snapshot>,
                     // Effective configs of a topic: broker defaults overlaid with its overrides.
                     caf::replies_to<describe_atom, std::string>::with<config_map>>;

} // namespace capstan

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::config_map)
