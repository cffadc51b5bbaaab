#pragma once

// A detached, one-shot actor that runs compact_segments (runtime/storage/compactor) off the
// scheduler's workers, so compaction never blocks appends, and quits after answering.

#include <caf/fwd.hpp>

#include "actors/log/log_messages.hpp"
#include "runtime/storage/compactor.hpp"

namespace capstan {

using compaction_worker_actor =
  caf::typed_actor<caf::replies_to<compact_atom, compaction_input>::with<compaction_output>>;

compaction_worker_actor spawn_compaction_worker(caf::actor_system& sys);

} // namespace capstan

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::compaction_input)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::compaction_output)
