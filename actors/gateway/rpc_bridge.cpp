#include "actors/gateway/rpc_bridge.hpp"

#include <mutex>

#include <caf/all.hpp>

#include "runtime/actor/logging.hpp"
#include "runtime/metrics/metrics_registry.hpp"

namespace capstan {

struct rpc_bridge::state {
  caf::actor_system& sys;
  metric_counter* restarts;
  mutable std::mutex mu; // guards current and stopped
  caf::actor current;
  bool stopped = false;

  state(caf::actor_system& s, metric_counter* r) : sys(s), restarts(r) {}
};

namespace {

// Each job costs one message and one request; the bridge never blocks.
caf::behavior bridge_behavior(caf::event_based_actor* self) {
  return {[self](bridge_job& job) { job.run(self); }};
}

void spawn_bridge(const std::shared_ptr<rpc_bridge::state>& st);

// Runs when a bridge actor ends (on the thread that ended it): unless the bridge was stopped,
// the dead actor is replaced. A stale notice (not the current actor) changes nothing.
void on_bridge_down(const std::weak_ptr<rpc_bridge::state>& weak, const caf::actor_addr& dead,
                    const caf::error& reason) {
  auto st = weak.lock();
  if (!st) return;
  {
    std::lock_guard<std::mutex> guard{st->mu};
    if (st->stopped || st->current.address() != dead) return;
  }
  get_logger("gateway")->error("RPC bridge actor ended ({}); starting a new one",
                               caf::to_string(reason));
  if (st->restarts) st->restarts->inc();
  spawn_bridge(st);
}

void spawn_bridge(const std::shared_ptr<rpc_bridge::state>& st) {
  auto bridge = st->sys.spawn<caf::hidden>(bridge_behavior);
  {
    std::lock_guard<std::mutex> guard{st->mu};
    if (st->stopped) {
      caf::anon_send_exit(bridge, caf::exit_reason::user_shutdown);
      return;
    }
    st->current = bridge;
  }
  // Attached after publishing: if the new actor is already gone, attach runs the functor at once
  // and it finds the actor current, so it is replaced as well.
  bridge->attach_functor([weak = std::weak_ptr<rpc_bridge::state>(st), addr = bridge.address()](
                             const caf::error& reason) { on_bridge_down(weak, addr, reason); });
}

} // namespace

rpc_bridge::rpc_bridge(caf::actor_system& sys, metric_counter* restarts)
    : state_(std::make_shared<state>(sys, restarts)) {
  spawn_bridge(state_);
}

rpc_bridge::~rpc_bridge() {
  stop();
}

caf::actor rpc_bridge::current() const {
  std::lock_guard<std::mutex> guard{state_->mu};
  return state_->current;
}

void rpc_bridge::stop() {
  caf::actor last;
  {
    std::lock_guard<std::mutex> guard{state_->mu};
    if (state_->stopped) return;
    state_->stopped = true;
    last = std::move(state_->current);
  }
  if (last) caf::anon_send_exit(last, caf::exit_reason::user_shutdown);
}

} // namespace capstan
