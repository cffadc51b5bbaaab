#include "runtime/actor/actor_system_setup.hpp"

#include <caf/atom.hpp>
#include <caf/io/middleman.hpp>

#include "runtime/actor/caf_error.hpp"
#include "runtime/messages/capnp_frame.hpp"

namespace capstan {

void add_message_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<capnp_frame>("capstan::capnp_frame");
}

void prepare_actor_config(caf::actor_system_config& cfg, const actor_config_options& options) {
  add_message_types(cfg);
  for (auto registrar : options.extra_types)
    registrar(cfg);
  cfg.add_error_category(caf_error_category, render_caf_error);
  if (options.max_threads > 0)
    cfg.set("scheduler.max-threads", options.max_threads);
  if (options.policy == actor_config_options::scheduler_policy::sharing) {
    cfg.set("scheduler.policy", caf::atom("sharing"));
  } else {
    // A worker with nothing to do polls briefly, then waits on its condition variable, which a
    // message from outside the scheduler (the RPC thread, the multiplexer, an I/O worker)
    // signals. CAF's default spends ~25 ms between those in 50 us sleeps, during which such a
    // message waits; CAF's sharing policy wakes the other worker on every send between actors,
    // two context switches per hop when one worker alone would do.
    cfg.set("work-stealing.aggressive-poll-attempts", size_t{10});
    cfg.set("work-stealing.moderate-poll-attempts", size_t{0});
  }
  if (options.load_middleman) {
    cfg.load<caf::io::middleman>();
    // A message from another node is deserialized on the multiplexer thread and enqueued to its
    // actor directly. CAF's default (one BASP worker on 2 cores) hands it to a worker that runs
    // on the scheduler first: one more thread hand-off on every replication round trip.
    cfg.set("middleman.workers", size_t{0});
  }
}

actor_config::actor_config(const actor_config_options& options) {
  prepare_actor_config(*this, options);
}

} // namespace capstan
