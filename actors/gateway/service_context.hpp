#pragma once

// What the client gateway's request handlers (handlers/) share, whichever front door a request
// came through: the node's actors and limits (service_context, one per server) and one client
// connection's accounting (client_session).
//
// Threads: used on the server's kj thread, except the bridge (any thread).

#include <chrono>
#include <cstdint>
#include <memory>

#include <kj/async-io.h>

#include "actors/gateway/gateway_metrics.hpp"
#include "actors/gateway/parked_fetch_limiter.hpp"
#include "actors/gateway/rpc_bridge.hpp"
#include "actors/gateway/rpc_limits.hpp"
#include "actors/gateway/rpc_server.hpp"

namespace capstan {

// What one connection's calls will still add to its unsent answers: calls in flight (parked
// fetches aside, they have their own caps) and the most their fetch answers can carry. The read
// gate adds what the front door has queued to send. Used on the kj thread only.
struct connection_load {
  int64_t calls = 0;
  int64_t fetch_bytes = 0;
};

// State shared by every connection's service; outlives in-flight calls (held by shared_ptr).
struct service_context {
  service_context(caf::actor_system& sys, rpc_targets t, rpc_limits l);
  service_context(const service_context&) = delete;
  service_context& operator=(const service_context&) = delete;

  rpc_targets targets;
  gateway_metrics metrics;
  rpc_limits limits;
  // Issues CAF requests for the kj thread.
  rpc_bridge bridge;
  // Fetches that may park, per connection and on the node.
  parked_fetch_limiter parked_fetches;
  // Calls in flight on every connection together (queued.max.requests); kj thread only.
  int64_t calls_in_flight = 0;
  // The kj loop's timer, for the calls' deadlines; set by the server's kj thread before it
  // serves and used only there.
  kj::Timer* timer = nullptr;
  // Added to a call's own timeout (produce timeoutMs, fetch maxWaitMs) before the gateway gives up
  // waiting for the actor and answers REQUEST_TIMED_OUT.
  std::chrono::milliseconds reply_margin{5000};
  // Bound on metadata, topic admin and group calls.
  std::chrono::milliseconds admin_timeout{30000};
};

// One client connection as a handler sees it. Copies share the connection's counts.
struct client_session {
  std::shared_ptr<service_context> ctx;
  // The connection's load, shared with its read gate.
  std::shared_ptr<connection_load> load;
  // This connection's fetches that may park (shared with their in-flight calls).
  std::shared_ptr<parked_fetch_limiter::connection_count> parked;

  explicit client_session(std::shared_ptr<service_context> c,
                          std::shared_ptr<connection_load> l = std::make_shared<connection_load>())
      : ctx(std::move(c)), load(std::move(l)),
        parked(std::make_shared<parked_fetch_limiter::connection_count>()) {}

  // Counts `call` in the connection's load, and unless `parked` in the node's calls in flight,
  // until it completes or is cancelled; `fetch_bytes` is the most a fetch's answer can carry (0
  // for other calls and parked fetches).
  template <class T>
  kj::Promise<T> answered_later(kj::Promise<T> call, int64_t fetch_bytes = 0,
                                bool parked_call = false) const {
    ++load->calls;
    // A parked fetch waits on data, not on the node: it has its own caps and must not stop the
    // node from reading the produce that would answer it.
    const int64_t node_calls = parked_call ? 0 : 1;
    ctx->calls_in_flight += node_calls;
    load->fetch_bytes += fetch_bytes;
    return call.attach(kj::defer([l = load, c = ctx, fetch_bytes, node_calls] {
      --l->calls;
      c->calls_in_flight -= node_calls;
      l->fetch_bytes -= fetch_bytes;
    }));
  }
};

} // namespace capstan
