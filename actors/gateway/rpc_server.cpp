#include "actors/gateway/rpc_server.hpp"

#include <chrono>
#include <future>
#include <mutex>
#include <thread>
#include <utility>

#include <caf/actor_system.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>
#include <capnp/rpc-twoparty.h>
#include <capnp/rpc.h>
#include <kj/async-io.h>
#include <kj/debug.h>

#include "actors/gateway/capstan_service.hpp"
#include "actors/gateway/request_validation.hpp"
#include "runtime/actor/logging.hpp"
#include "runtime/metrics/metrics_registry.hpp"

namespace capstan {

namespace {

// One client connection: its stream, Cap'n Proto network and RPC system, and its own service
// (so fetch pins are per connection). Members are destroyed in reverse order: the RPC system
// (cancelling in-flight calls) before the network before the stream.
struct connection {
  std::shared_ptr<fetch_pins> pins;
  pinning_stream stream;
  capnp::TwoPartyVatNetwork network;
  capnp::RpcSystem<capnp::rpc::twoparty::VatId> rpc;

  static capnp::ReaderOptions reader_options() {
    capnp::ReaderOptions options;
    options.traversalLimitInWords = rpc_traversal_limit_words;
    return options;
  }

  connection(kj::Own<kj::AsyncIoStream> socket, const std::shared_ptr<service_context>& ctx)
      : pins(std::make_shared<fetch_pins>()), stream(kj::mv(socket), pins),
        network(stream, capnp::rpc::twoparty::Side::SERVER, reader_options()),
        rpc(capnp::makeRpcServer(network,
                                 rpc::Capstan::Client(kj::heap<capstan_service>(ctx, pins)))) {}
};

// Logs connections that end with an error (garbage bytes, a truncated frame, a reset): the
// connection is dropped, the server goes on.
class connection_errors final : public kj::TaskSet::ErrorHandler {
public:
  void taskFailed(kj::Exception&& e) override {
    get_logger("gateway")->debug("client connection ended: {}", e.getDescription().cStr());
  }
};

struct started_info {
  uint16_t port = 0;
  kj::Own<kj::CrossThreadPromiseFulfiller<void>> stop;
};

} // namespace

struct rpc_server::impl {
  caf::actor_system& sys;
  std::shared_ptr<service_context> ctx;
  std::thread thread;
  uint16_t port = 0;
  std::mutex mu; // guards stop_fulfiller and stopped
  kj::Own<kj::CrossThreadPromiseFulfiller<void>> stop_fulfiller;
  bool stopped = false;

  impl(caf::actor_system& s, std::shared_ptr<service_context> c) : sys(s), ctx(std::move(c)) {}

  static kj::Promise<void> accept_loop(kj::ConnectionReceiver& listener, kj::TaskSet& tasks,
                                       kj::Timer& timer, std::shared_ptr<service_context> ctx) {
    return listener.accept()
        .then(
            [&tasks, ctx](kj::Own<kj::AsyncIoStream>&& socket) {
              auto conn = kj::heap<connection>(kj::mv(socket), ctx);
              if (ctx->metrics.connections) ctx->metrics.connections->inc();
              auto done = conn->network.onDisconnect();
              tasks.add(done.attach(kj::mv(conn)));
              return kj::Promise<void>(kj::READY_NOW);
            },
            [&timer](kj::Exception&& e) {
              // E.g. out of file descriptors: keep listening after a pause instead of spinning.
              get_logger("gateway")->warn("accept failed: {}", e.getDescription().cStr());
              return timer.afterDelay(100 * kj::MILLISECONDS);
            })
        .then([&listener, &tasks, &timer, ctx]() mutable {
          return accept_loop(listener, tasks, timer, std::move(ctx));
        });
  }

  // The kj thread. Reports the bound port (or why binding failed) through `started`, then serves
  // until the stop fulfiller is fulfilled or dropped.
  void run(std::string host, uint16_t want_port, std::promise<result<started_info>> started) {
    bool reported = false;
    try {
      auto io = kj::setupAsyncIo();
      auto address = io.provider->getNetwork().parseAddress(host, want_port).wait(io.waitScope);
      auto listener = address->listen();
      auto stop = kj::newPromiseAndCrossThreadFulfiller<void>();
      started.set_value(
          started_info{static_cast<uint16_t>(listener->getPort()), kj::mv(stop.fulfiller)});
      reported = true;
      connection_errors errors;
      kj::TaskSet connections{errors};
      stop.promise.exclusiveJoin(accept_loop(*listener, connections, io.provider->getTimer(), ctx))
          .wait(io.waitScope);
    } catch (const kj::Exception& e) {
      if (!reported) {
        started.set_value(make_error(errc::network_exception, "cannot listen on " + host + ":" +
                                                                  std::to_string(want_port) + ": " +
                                                                  e.getDescription().cStr()));
        return;
      }
      get_logger("gateway")->error("RPC server stopped: {}", e.getDescription().cStr());
    }
  }
};

result<std::unique_ptr<rpc_server>> rpc_server::start(caf::actor_system& sys, rpc_targets targets,
                                                      const std::string& host, uint16_t port) {
  gateway_metrics metrics{targets.metrics};
  auto ctx = std::make_shared<service_context>(
      service_context{spawn_rpc_bridge(sys), std::move(targets), std::move(metrics)});
  auto state = std::make_unique<impl>(sys, ctx);
  std::promise<result<started_info>> started;
  auto ready = started.get_future();
  state->thread = std::thread([raw = state.get(), host, port, p = std::move(started)]() mutable {
    raw->run(host, port, std::move(p));
  });
  auto info = ready.get();
  if (!info) {
    state->thread.join();
    caf::anon_send_exit(ctx->bridge, caf::exit_reason::user_shutdown);
    return info.err();
  }
  state->port = info->port;
  state->stop_fulfiller = kj::mv(info->stop);
  get_logger("gateway")->info("client RPC listening on {}:{}", host, state->port);
  return std::unique_ptr<rpc_server>(new rpc_server(std::move(state)));
}

rpc_server::rpc_server(std::unique_ptr<impl> impl) : impl_(std::move(impl)) {}

void rpc_server::stop() {
  {
    std::lock_guard<std::mutex> guard{impl_->mu};
    if (impl_->stopped) return;
    impl_->stopped = true;
    impl_->stop_fulfiller->fulfill();
  }
  if (impl_->thread.joinable()) impl_->thread.join();
  // No call can reach the bridge any more; its pending requests' fulfillers are dropped with it.
  caf::anon_send_exit(impl_->ctx->bridge, caf::exit_reason::user_shutdown);
}

rpc_server::~rpc_server() {
  stop();
}

uint16_t rpc_server::port() const {
  return impl_->port;
}

} // namespace capstan
