#include "actors/log/compaction_worker.hpp"

#include <caf/all.hpp>

#include "runtime/actor/caf_error.hpp"

namespace capstan {

namespace {

compaction_worker_actor::behavior_type compaction_worker(compaction_worker_actor::pointer self) {
  return {
    [self](compact_atom, const compaction_input& input) -> caf::result<compaction_output> {
      self->quit();
      auto out = compact_segments(input);
      if (!out) return to_caf_error(out.err());
      return std::move(*out);
    },
  };
}

} // namespace

compaction_worker_actor spawn_compaction_worker(caf::actor_system& sys) {
  return sys.spawn<caf::detached>(compaction_worker);
}

} // namespace capstan
