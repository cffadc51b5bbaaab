#include "actors/gateway/rpc_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <future>
#include <mutex>
#include <thread>
#include <utility>

#include <capnp/rpc-twoparty.h>
#include <capnp/rpc.h>
#include <kj/async-io.h>
#include <kj/debug.h>

#include "actors/gateway/accept_loop.hpp"
#include "actors/gateway/capstan_service.hpp"
#include "actors/gateway/connection_limiter.hpp"
#include "actors/gateway/kafka/kafka_connection.hpp"
#include "runtime/actor/log_throttle.hpp"
#include "runtime/actor/logging.hpp"
#include "runtime/metrics/metrics_registry.hpp"

namespace capstan {

namespace {

constexpr auto log_interval = std::chrono::seconds(10);

// A connection's place under max.connections and max.connections.per.ip, and in the open
// connections gauge, until the connection ends.
class admission {
public:
  admission(connection_limiter& limiter, std::string ip, metric_gauge* open)
      : limiter_(limiter), ip_(std::move(ip)), open_(open) {
    if (open_) open_->set(limiter_.open());
  }
  admission(const admission&) = delete;
  admission& operator=(const admission&) = delete;
  ~admission() {
    limiter_.release(ip_);
    if (open_) open_->set(limiter_.open());
  }

private:
  connection_limiter& limiter_;
  std::string ip_;
  metric_gauge* open_;
};

// One client connection: its stream, Cap'n Proto network and RPC system, and its own service
// (so fetch pins and parked fetches are per connection). Members are destroyed in reverse order:
// the RPC system (cancelling in-flight calls) before the network before the stream, and the
// admission last.
//
// What one connection can make the node hold is bounded on both sides: requests by the flow
// limit (Cap'n Proto stops reading while the calls in flight pass it), answers by the stream,
// which stops reading while the answers waiting to be sent, with those still to come, pass
// queued.max.response{s,.bytes}.per.connection.
struct connection {
  kj::Own<admission> admitted;
  std::shared_ptr<fetch_pins> pins;
  std::shared_ptr<connection_load> load;
  connection_stream stream;
  capnp::TwoPartyVatNetwork network;
  capnp::RpcSystem<capnp::rpc::twoparty::VatId> rpc;

  static capnp::ReaderOptions reader_options(const rpc_limits& limits) {
    capnp::ReaderOptions options;
    options.traversalLimitInWords = limits.traversal_limit_words();
    return options;
  }

  connection(kj::Own<kj::AsyncIoStream> socket, const std::shared_ptr<service_context>& ctx,
             kj::Own<admission> a, kj::Timer& timer)
      : admitted(kj::mv(a)), pins(std::make_shared<fetch_pins>()),
        load(std::make_shared<connection_load>()), stream(kj::mv(socket), pins, timer),
        network(stream, capnp::rpc::twoparty::Side::SERVER, reader_options(ctx->limits)),
        rpc(capnp::makeRpcServer(
            network, rpc::Capstan::Client(kj::heap<capstan_service>(ctx, pins, load)))) {
    const auto& limits = ctx->limits;
    rpc.setFlowLimit(limits.flow_limit_words());
    stream.hold_reads_while(
        [this, node = ctx, bytes = static_cast<int64_t>(limits.queued_max_response_bytes_per_connection),
         count = static_cast<int64_t>(limits.queued_max_responses_per_connection),
         node_calls = static_cast<int64_t>(limits.queued_max_requests)] {
          const auto queued_bytes = static_cast<int64_t>(network.getCurrentQueueSize());
          const auto queued = static_cast<int64_t>(network.getCurrentQueueCount());
          return queued_bytes + load->fetch_bytes > bytes || queued + load->calls > count ||
                 node->calls_in_flight >= node_calls;
        });
  }
};

// Logs connections that end with an error (garbage bytes, a truncated frame, a reset, a request
// above socket.request.max.bytes): the connection is dropped, the server goes on.
class connection_errors final : public kj::TaskSet::ErrorHandler {
public:
  void taskFailed(kj::Exception&& e) override {
    get_logger("gateway")->debug("client connection ended: {}", e.getDescription().cStr());
  }
};

// The client's address as text ("127.0.0.1", "::1"); "local" for a non-IP socket.
std::string peer_ip(kj::AsyncIoStream& socket) {
  sockaddr_storage addr{};
  uint len = sizeof addr;
  socket.getpeername(reinterpret_cast<sockaddr*>(&addr), &len);
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET)
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(addr).sin_addr, text, sizeof text);
  else if (addr.ss_family == AF_INET6)
    ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(addr).sin6_addr, text,
                sizeof text);
  else
    return "local";
  return text;
}

std::string suppressed_note(uint64_t suppressed) {
  return suppressed == 0 ? std::string{}
                         : " (" + std::to_string(suppressed) + " more since the last such line)";
}

// Which listener a connection came in on.
enum class front_door { native, kafka };

// The client listeners' state on the kj thread: admission (max.connections counts both front
// doors together, as Kafka counts every listener of a broker), the live connections, and the
// throttles of the lines a client could otherwise repeat at will.
class client_acceptor {
public:
  // REQUIRES: `timer` (the kj loop's) outlives the acceptor.
  client_acceptor(std::shared_ptr<service_context> ctx, kj::Timer& timer)
      : ctx_(std::move(ctx)), timer_(timer),
        limiter_(ctx_->limits.max_connections, ctx_->limits.max_connections_per_ip) {}

  // Admits `socket` as a connection, or closes it at once when a limit refuses it. Never throws:
  // a socket that fails here (e.g. already reset by its peer) is closed.
  void serve(kj::Own<kj::AsyncIoStream> socket, front_door door) {
    KJ_IF_MAYBE (e, kj::runCatchingExceptions([&] { admit(kj::mv(socket), door); })) {
      get_logger("gateway")->debug("client connection dropped at accept: {}",
                                   e->getDescription().cStr());
    }
  }

  void accept_failed(const kj::Exception& e) {
    const auto& m = ctx_->metrics;
    if (m.accept_errors) m.accept_errors->inc();
    if (auto suppressed = accept_log_.admit(std::chrono::steady_clock::now()))
      get_logger("gateway")->warn("accept failed, retrying in 100 ms: {}{}",
                                  e.getDescription().cStr(), suppressed_note(*suppressed));
  }

private:
  void admit(kj::Own<kj::AsyncIoStream> socket, front_door door) {
    const auto& m = ctx_->metrics;
    auto ip = peer_ip(*socket);
    const auto verdict = limiter_.admit(ip);
    if (verdict != connection_limiter::verdict::admitted) {
      const bool per_ip = verdict == connection_limiter::verdict::over_max_connections_per_ip;
      if (auto* c = per_ip ? m.refused_max_connections_per_ip : m.refused_max_connections) c->inc();
      if (auto suppressed = refused_log_.admit(std::chrono::steady_clock::now()))
        get_logger("gateway")->warn(
            "closed a client connection from {}: {} ({}) reached{}", ip, limit_name(verdict),
            per_ip ? ctx_->limits.max_connections_per_ip : ctx_->limits.max_connections,
            suppressed_note(*suppressed));
      return;
    }
    auto admitted = kj::heap<admission>(limiter_, std::move(ip), m.open_connections);
    if (m.connections) m.connections->inc();
    if (door == front_door::kafka) {
      auto conn = kj::heap<kafka_connection>(kj::mv(socket), ctx_, timer_);
      auto done = conn->run();
      connections_.add(done.attach(kj::mv(conn), kj::mv(admitted)));
      return;
    }
    auto conn = kj::heap<connection>(kj::mv(socket), ctx_, kj::mv(admitted), timer_);
    auto done = conn->network.onDisconnect();
    connections_.add(done.attach(kj::mv(conn)));
  }

  std::shared_ptr<service_context> ctx_;
  kj::Timer& timer_;
  connection_limiter limiter_;
  log_throttle refused_log_{log_interval};
  log_throttle accept_log_{log_interval};
  connection_errors errors_;
  // Declared last: destroyed first, ending every connection while the limiter still exists.
  kj::TaskSet connections_{errors_};
};

struct started_info {
  uint16_t port = 0;
  uint16_t kafka_port = 0;
  kj::Own<kj::CrossThreadPromiseFulfiller<void>> stop;
};

} // namespace

struct rpc_server::impl {
  std::shared_ptr<service_context> ctx;
  std::thread thread;
  uint16_t port = 0;
  uint16_t kafka_port = 0;
  std::mutex mu; // guards stop_fulfiller and stopped
  kj::Own<kj::CrossThreadPromiseFulfiller<void>> stop_fulfiller;
  bool stopped = false;

  explicit impl(std::shared_ptr<service_context> c) : ctx(std::move(c)) {}

  // The kj thread. Reports the bound port (or why binding failed) through `started`, then serves
  // until the stop fulfiller is fulfilled or dropped.
  void run(std::string host, uint16_t want_port, std::optional<kafka_listen_address> kafka,
           std::promise<result<started_info>> started) {
    bool reported = false;
    // The listener being opened, for the error if it cannot be.
    std::string opening = host + ":" + std::to_string(want_port);
    try {
      auto io = kj::setupAsyncIo();
      auto& network = io.provider->getNetwork();
      auto listener = network.parseAddress(host, want_port).wait(io.waitScope)->listen();
      kj::Own<kj::ConnectionReceiver> kafka_listener;
      if (kafka) {
        opening = "Kafka listener " + kafka->host + ":" + std::to_string(kafka->port);
        kafka_listener = network.parseAddress(kafka->host, kafka->port).wait(io.waitScope)->listen();
      }
      auto stop = kj::newPromiseAndCrossThreadFulfiller<void>();
      started_info info;
      info.port = static_cast<uint16_t>(listener->getPort());
      if (kafka_listener) info.kafka_port = static_cast<uint16_t>(kafka_listener->getPort());
      info.stop = kj::mv(stop.fulfiller);
      started.set_value(kj::mv(info));
      reported = true;
      auto& timer = io.provider->getTimer();
      ctx->timer = &timer;
      KJ_DEFER(ctx->timer = nullptr);
      client_acceptor acceptor{ctx, timer};
      auto accepting = [&](kj::ConnectionReceiver& from, front_door door) {
        return accept_forever(
            from, timer,
            [&acceptor, door](kj::Own<kj::AsyncIoStream> socket) {
              acceptor.serve(kj::mv(socket), door);
            },
            [&acceptor](const kj::Exception& e) { acceptor.accept_failed(e); });
      };
      auto serving = accepting(*listener, front_door::native);
      if (kafka_listener)
        serving = serving.exclusiveJoin(accepting(*kafka_listener, front_door::kafka));
      stop.promise.exclusiveJoin(kj::mv(serving)).wait(io.waitScope);
    } catch (const kj::Exception& e) {
      if (!reported) {
        started.set_value(make_error(errc::network_exception,
                                     "cannot listen on " + opening + ": " + e.getDescription().cStr()));
        return;
      }
      get_logger("gateway")->error("RPC server stopped: {}", e.getDescription().cStr());
    }
  }
};

result<std::unique_ptr<rpc_server>> rpc_server::start(caf::actor_system& sys, rpc_targets targets,
                                                      const std::string& host, uint16_t port,
                                                      rpc_limits limits,
                                                      std::optional<kafka_listen_address> kafka) {
  auto ctx = std::make_shared<service_context>(sys, std::move(targets), limits);
  auto state = std::make_unique<impl>(ctx);
  std::promise<result<started_info>> started;
  auto ready = started.get_future();
  state->thread =
      std::thread([raw = state.get(), host, port, kafka, p = std::move(started)]() mutable {
        raw->run(host, port, kafka, std::move(p));
      });
  auto info = ready.get();
  if (!info) {
    state->thread.join();
    ctx->bridge.stop();
    return info.err();
  }
  state->port = info->port;
  state->kafka_port = info->kafka_port;
  state->stop_fulfiller = kj::mv(info->stop);
  get_logger("gateway")->info(
      "client RPC listening on {}:{} (max.connections {}, max.connections.per.ip {}, "
      "socket.request.max.bytes {}, fetch.max.parked.per.node {})",
      host, state->port, limits.max_connections, limits.max_connections_per_ip,
      limits.socket_request_max_bytes, limits.fetch_max_parked_per_node);
  if (kafka)
    get_logger("gateway")->info("Kafka listener on {}:{}", kafka->host, state->kafka_port);
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
  impl_->ctx->bridge.stop();
}

rpc_server::~rpc_server() {
  stop();
}

uint16_t rpc_server::port() const {
  return impl_->port;
}

uint16_t rpc_server::kafka_port() const {
  return impl_->kafka_port;
}

caf::actor rpc_server::bridge() const {
  return impl_->ctx->bridge.current();
}

} // namespace capstan
