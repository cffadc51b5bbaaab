#pragma once

// The bridge from the RPC server's kj thread to CAF (docs/protocol.md, "Threads and the CAF
// bridge"). The kj thread is not an actor and cannot issue CAF requests, so it sends each call as
// a bridge_job to a hidden bridge actor, which issues the request with request().then() and
// completes the call's cross-thread fulfiller from the reply.
//
// The bridge is supervised: whenever its actor ends, for any reason but stop(), a new one is
// spawned and current() returns it from then on. The calls the dead one held lose their reply
// slots and end as REQUEST_TIMED_OUT (their outcome is unknown); later calls are served.

#include <cstdint>
#include <functional>
#include <memory>

#include <caf/actor.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/fwd.hpp>

namespace capstan {

class metric_counter;

// Work the kj thread hands to the bridge actor: issue one request and complete a cross-thread
// fulfiller from its reply. Local only; never serialized.
struct bridge_job {
  std::function<void(caf::event_based_actor*)> run;
};

class rpc_bridge {
public:
  // Spawns the first bridge actor. `restarts` (may be null) counts the respawns.
  rpc_bridge(caf::actor_system& sys, metric_counter* restarts);
  // stop().
  ~rpc_bridge();
  rpc_bridge(const rpc_bridge&) = delete;
  rpc_bridge& operator=(const rpc_bridge&) = delete;

  // The actor to send the next job to. Any thread.
  caf::actor current() const;
  // Ends the bridge and its supervision; jobs sent afterwards are dropped with their reply
  // slots. Idempotent. Any thread.
  void stop();

  struct state;

private:
  std::shared_ptr<state> state_;
};

} // namespace capstan

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::bridge_job)
