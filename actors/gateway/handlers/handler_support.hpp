#pragma once

// What every request handler (handlers/*_handler.hpp) stands on: the neutral answer type, the
// way from the kj thread to an actor and back, and routing to a partition replica.
//
// A handler is a plain function of a client_session and a front-door-neutral request struct; it
// validates, counts the request and its error (capstan_rpc_requests_total, _errors_total), asks
// the actor, and resolves with an answer<R>: a value, or an error with Kafka's code
// (runtime/errc.hpp). The Cap'n Proto service and the Kafka listener only translate their wire
// form to and from those structs, so a behaviour is written once.
//
// Threads: handlers run on the server's kj thread; the CAF side of a call runs in the bridge
// actor (rpc_bridge.hpp) and completes it through a cross-thread fulfiller. Nothing blocks.

// GCC 12 reports the error string of an answer<R> held in kj::Maybe inside kj's cross-thread
// fulfiller as maybe-uninitialized once enough calls instantiate it; kj only destroys the value it
// constructed (a false positive, as in runtime/client/rpc_cluster_client.hpp). The warning points
// into libstdc++, past any push/pop here, so it is off for every file that asks an actor this way.
#if defined(__GNUC__) && !defined(__clang__) // clang has no such warning
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include <caf/all.hpp>
#include <kj/async.h>

#include "actors/gateway/service_context.hpp"
#include "runtime/actor/caf_error.hpp"
#include "runtime/result.hpp"

namespace capstan {

// A handler's answer as it crosses threads and front doors. A plain struct rather than
// result<R>: g++ 12 warns (-Wmaybe-uninitialized, a false positive) about a std::variant inside
// kj's promise nodes. `value` may carry fields the front door answers with even on an error
// (JoinGroup's member id).
template <class R>
struct answer {
  R value{};
  error err; // errc::none: `value` holds the answer

  bool ok() const { return err.code == errc::none; }
  result<R> take() && {
    if (err.code != errc::none) return std::move(err);
    return std::move(value);
  }
};

// `e`, counted as `method`'s error.
template <class R>
answer<R> refused(const service_context& ctx, const char* method, error e) {
  ctx.metrics.count_error(method, e.code);
  return answer<R>{R{}, std::move(e)};
}

// `a`, its error (if any) counted as `method`'s.
template <class R>
answer<R> counted(const service_context& ctx, const char* method, answer<R> a) {
  ctx.metrics.count_error(method, a.err.code);
  return a;
}

// A request's CAF error as the client sees it. For calls addressed to a partition replica, a
// replica that went away between the routing lookup and the request (its topic was deleted)
// bounced the request unprocessed: UNKNOWN_TOPIC_OR_PARTITION, not a timeout.
template <class Handle>
error to_client_error(const caf::error& raw) {
  if constexpr (std::is_same_v<Handle, partition_replica_actor>) {
    if (raw.category() == caf::atom("system") &&
        static_cast<caf::sec>(raw.code()) == caf::sec::request_receiver_down)
      return make_error(errc::unknown_topic_or_partition, "the partition replica is gone");
  }
  return from_caf_error(raw);
}

// A call's reply slot, shared by its bridge job and the job's reply handlers. It goes away once
// the reply was delivered, or when the request is lost (a dead bridge drops the job). `hold`
// goes with it, or at the call's deadline if the actor has not answered by then.
template <class R>
struct reply_slot {
  kj::Own<kj::CrossThreadPromiseFulfiller<answer<R>>> fulfiller;
  std::mutex mu; // guards hold: the deadline drops it on the kj thread
  std::shared_ptr<void> hold;

  void drop_hold() {
    std::shared_ptr<void> last;
    std::lock_guard<std::mutex> guard{mu};
    last = std::move(hold);
  }
};

// Asks `dest` through the bridge (rpc_bridge.hpp); the promise always resolves (never rejects) on
// the kj thread. No answer within `timeout`, a lost bridge or a lost reply (the fulfiller dropped
// unfulfilled) becomes REQUEST_TIMED_OUT. `hold` (may be null) lives until the actor's answer
// arrives or the deadline passes, whatever happens to the call meanwhile.
// The deadline is a kj timer on the kj thread rather than a CAF request timeout: those wake CAF's
// clock thread to set and to cancel them, twice per produce and per fetch.
template <class R, class Handle, class... Ts>
kj::Promise<answer<R>> ask_holding(const service_context& ctx, std::shared_ptr<void> hold,
                                   Handle dest, std::chrono::milliseconds timeout, Ts... xs) {
  auto paf = kj::newPromiseAndCrossThreadFulfiller<answer<R>>();
  auto slot = std::make_shared<reply_slot<R>>();
  slot->fulfiller = kj::mv(paf.fulfiller);
  slot->hold = std::move(hold);
  caf::anon_send(
      ctx.bridge.current(), bridge_job{[slot, dest, args = std::make_tuple(std::move(xs)...)](
                                           caf::event_based_actor* self) mutable {
        std::apply(
            [&](auto&... as) { return self->request(dest, caf::infinite, std::move(as)...); }, args)
            .then(
                [slot](R& r) {
                  slot->fulfiller->fulfill(answer<R>{std::move(r), {}});
                },
                [slot](caf::error& e) {
                  slot->fulfiller->fulfill(answer<R>{R{}, to_client_error<Handle>(e)});
                });
      }});
  auto answered = paf.promise.catch_([](kj::Exception&& e) {
    return answer<R>{R{}, make_error(errc::request_timed_out,
                                     std::string{"no reply from the broker's actors: "} +
                                         e.getDescription().cStr())};
  });
  return answered.exclusiveJoin(
      ctx.timer->afterDelay(timeout.count() * kj::MILLISECONDS).then([slot, timeout] {
        slot->drop_hold();
        return answer<R>{
            R{}, make_error(errc::request_timed_out, "no reply from the broker's actors within " +
                                                         std::to_string(timeout.count()) + " ms")};
      }));
}

template <class R, class Handle, class... Ts>
kj::Promise<answer<R>> ask(const service_context& ctx, Handle dest,
                           std::chrono::milliseconds timeout, Ts... xs) {
  return ask_holding<R>(ctx, nullptr, std::move(dest), timeout, std::move(xs)...);
}

// This node's replica of topic-partition, from the replica manager's routing table:
// UNKNOWN_TOPIC_OR_PARTITION if it has none.
result<partition_replica_actor> route(const service_context& ctx, const std::string& topic,
                                      int32_t partition);

// The controller's metadata cache once this node accepted an UpdateMetadata; null before.
metadata_cache_ptr controller_cache(const service_context& ctx);

// Microseconds since `start`, for the latency histograms.
uint64_t micros_since(std::chrono::steady_clock::time_point start);

} // namespace capstan
