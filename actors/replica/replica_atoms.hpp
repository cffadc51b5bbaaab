#pragma once

// The atoms of actors/replica's messages (partition replicas, the replica manager, fetchers and
// fetch sessions), in one place so the message headers can include each other's types.

#include <caf/atom.hpp>

namespace capstan {

using produce_atom = caf::atom_constant<caf::atom("produce")>;
using fetch_atom = caf::atom_constant<caf::atom("fetch")>;
using offsets_atom = caf::atom_constant<caf::atom("offsets")>;
using lookup_atom = caf::atom_constant<caf::atom("lookup")>;
using apply_atom = caf::atom_constant<caf::atom("apply")>;
using remove_atom = caf::atom_constant<caf::atom("remove")>;
using stop_atom = caf::atom_constant<caf::atom("stop")>;
using checkpoint_atom = caf::atom_constant<caf::atom("checkpoint")>;
using status_atom = caf::atom_constant<caf::atom("status")>;
using alterisr_atom = caf::atom_constant<caf::atom("alterisr")>;
using isrcheck_atom = caf::atom_constant<caf::atom("isrcheck")>;
using become_atom = caf::atom_constant<caf::atom("become")>;
using ffetch_atom = caf::atom_constant<caf::atom("ffetch")>;
using epochend_atom = caf::atom_constant<caf::atom("epochend")>;
using position_atom = caf::atom_constant<caf::atom("position")>;
using ftruncate_atom = caf::atom_constant<caf::atom("ftruncate")>;
using replicate_atom = caf::atom_constant<caf::atom("replicate")>;
using restart_atom = caf::atom_constant<caf::atom("restart")>;
using notify_atom = caf::atom_constant<caf::atom("notify")>;
using session_atom = caf::atom_constant<caf::atom("session")>;
using assign_atom = caf::atom_constant<caf::atom("assign")>;
using unassign_atom = caf::atom_constant<caf::atom("unassign")>;
using open_atom = caf::atom_constant<caf::atom("open")>;
using leaderisr_atom = caf::atom_constant<caf::atom("leaderisr")>;
using metadata_atom = caf::atom_constant<caf::atom("metadata")>;
using stopreplica_atom = caf::atom_constant<caf::atom("stopreplic")>;
inline constexpr produce_atom produce_atom_v{};
inline constexpr fetch_atom fetch_atom_v{};
inline constexpr offsets_atom offsets_atom_v{};
inline constexpr lookup_atom lookup_atom_v{};
inline constexpr apply_atom apply_atom_v{};
inline constexpr remove_atom remove_atom_v{};
inline constexpr stop_atom stop_atom_v{};
inline constexpr checkpoint_atom checkpoint_atom_v{};
inline constexpr status_atom status_atom_v{};
inline constexpr alterisr_atom alterisr_atom_v{};
inline constexpr isrcheck_atom isrcheck_atom_v{};
inline constexpr become_atom become_atom_v{};
inline constexpr ffetch_atom ffetch_atom_v{};
inline constexpr epochend_atom epochend_atom_v{};
inline constexpr position_atom position_atom_v{};
inline constexpr ftruncate_atom ftruncate_atom_v{};
inline constexpr replicate_atom replicate_atom_v{};
inline constexpr restart_atom restart_atom_v{};
inline constexpr notify_atom notify_atom_v{};
inline constexpr session_atom session_atom_v{};
inline constexpr assign_atom assign_atom_v{};
inline constexpr unassign_atom unassign_atom_v{};
inline constexpr open_atom open_atom_v{};
inline constexpr leaderisr_atom leaderisr_atom_v{};
inline constexpr metadata_atom metadata_atom_v{};
inline constexpr stopreplica_atom stopreplica_atom_v{};

} // namespace capstan
