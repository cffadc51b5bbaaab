#include "actors/gateway/metrics_server.hpp"

#include <chrono>
#include <future>
#include <mutex>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <kj/async-io.h>
#include <kj/debug.h>

#include "actors/gateway/accept_loop.hpp"
#include "runtime/actor/log_throttle.hpp"
#include "runtime/actor/logging.hpp"
#include "runtime/metrics/metrics_registry.hpp"

namespace capstan {

namespace {

constexpr size_t max_request_head = 8192;
constexpr auto request_deadline = 10 * kj::SECONDS;

std::string http_response(std::string_view status, std::string_view content_type,
                          const std::string& body) {
  std::string out = "HTTP/1.1 ";
  out += status;
  out += "\r\nContent-Type: ";
  out += content_type;
  out += "\r\nContent-Length: " + std::to_string(body.size());
  out += "\r\nConnection: close\r\n\r\n";
  out += body;
  return out;
}

// The response to a request head (everything up to the blank line).
std::string answer(std::string_view head, metrics_registry& registry,
                   const metrics_server::refresh_fn& refresh) {
  const auto line = head.substr(0, head.find("\r\n"));
  const auto sp1 = line.find(' ');
  const auto sp2 = line.find(' ', sp1 == std::string_view::npos ? sp1 : sp1 + 1);
  if (sp1 == std::string_view::npos || sp2 == std::string_view::npos)
    return http_response("400 Bad Request", "text/plain", "malformed request line\n");
  const auto method = line.substr(0, sp1);
  auto target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  target = target.substr(0, target.find('?'));
  if (target != "/metrics")
    return http_response("404 Not Found", "text/plain", "only /metrics is served\n");
  if (method != "GET" && method != "HEAD")
    return http_response("405 Method Not Allowed", "text/plain", "use GET\n");
  if (refresh) refresh(registry);
  auto response =
      http_response("200 OK", "text/plain; version=0.0.4; charset=utf-8", registry.render());
  if (method == "HEAD") response.resize(response.find("\r\n\r\n") + 4);
  return response;
}

struct http_exchange {
  kj::Own<kj::AsyncIoStream> socket;
  std::string head;
  std::array<char, 1024> buffer{};
  std::string response;
};

// Reads until the end of the request head, then answers and closes.
kj::Promise<void> serve(http_exchange& x, metrics_registry& registry,
                        const metrics_server::refresh_fn& refresh) {
  return x.socket->tryRead(x.buffer.data(), 1, x.buffer.size())
      .then([&x, &registry, &refresh](size_t n) -> kj::Promise<void> {
        if (n == 0) return kj::READY_NOW; // closed before a full head: nothing to answer
        x.head.append(x.buffer.data(), n);
        if (x.head.find("\r\n\r\n") == std::string::npos) {
          if (x.head.size() < max_request_head) return serve(x, registry, refresh);
          x.response = http_response("431 Request Header Fields Too Large", "text/plain",
                                     "request head above 8 KiB\n");
        } else {
          x.response = answer(x.head, registry, refresh);
        }
        return x.socket->write(x.response.data(), x.response.size()).then([&x] {
          x.socket->shutdownWrite();
        });
      });
}

class exchange_errors final : public kj::TaskSet::ErrorHandler {
public:
  void taskFailed(kj::Exception&& e) override {
    get_logger("metrics")->debug("metrics request failed: {}", e.getDescription().cStr());
  }
};

struct started_info {
  uint16_t port = 0;
  kj::Own<kj::CrossThreadPromiseFulfiller<void>> stop;
};

} // namespace

struct metrics_server::impl {
  std::shared_ptr<metrics_registry> registry;
  refresh_fn refresh;
  std::thread thread;
  uint16_t port = 0;
  std::mutex mu; // guards stop_fulfiller and stopped
  kj::Own<kj::CrossThreadPromiseFulfiller<void>> stop_fulfiller;
  bool stopped = false;


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
      exchange_errors errors;
      kj::TaskSet exchanges{errors};
      auto& timer = io.provider->getTimer();
      log_throttle accept_log{std::chrono::seconds(10)};
      auto serve_one = [this, &exchanges, &timer](kj::Own<kj::AsyncIoStream> socket) {
        auto x = kj::heap<http_exchange>();
        x->socket = kj::mv(socket);
        auto& ref = *x;
        exchanges.add(
            timer.timeoutAfter(request_deadline, serve(ref, *registry, refresh)).attach(kj::mv(x)));
      };
      auto failed = [&accept_log](const kj::Exception& e) {
        if (auto suppressed = accept_log.admit(std::chrono::steady_clock::now()))
          get_logger("metrics")->warn("accept failed, retrying in 100 ms: {} ({} more since the "
                                      "last such line)",
                                      e.getDescription().cStr(), *suppressed);
      };
      stop.promise.exclusiveJoin(accept_forever(*listener, timer, serve_one, failed))
          .wait(io.waitScope);
    } catch (const kj::Exception& e) {
      if (!reported) {
        started.set_value(make_error(errc::network_exception, "cannot listen on " + host + ":" +
                                                                  std::to_string(want_port) + ": " +
                                                                  e.getDescription().cStr()));
        return;
      }
      get_logger("metrics")->error("metrics endpoint stopped: {}", e.getDescription().cStr());
    }
  }
};

result<std::unique_ptr<metrics_server>>
metrics_server::start(std::shared_ptr<metrics_registry> registry, const std::string& host,
                      uint16_t port, refresh_fn refresh) {
  auto state = std::make_unique<impl>();
  state->registry = std::move(registry);
  state->refresh = std::move(refresh);
  std::promise<result<started_info>> started;
  auto ready = started.get_future();
  state->thread = std::thread([raw = state.get(), host, port, p = std::move(started)]() mutable {
    raw->run(host, port, std::move(p));
  });
  auto info = ready.get();
  if (!info) {
    state->thread.join();
    return info.err();
  }
  state->port = info->port;
  state->stop_fulfiller = kj::mv(info->stop);
  get_logger("metrics")->info("metrics on http://{}:{}/metrics", host, state->port);
  return std::unique_ptr<metrics_server>(new metrics_server(std::move(state)));
}

metrics_server::metrics_server(std::unique_ptr<impl> impl) : impl_(std::move(impl)) {}

void metrics_server::stop() {
  {
    std::lock_guard<std::mutex> guard{impl_->mu};
    if (impl_->stopped) return;
    impl_->stopped = true;
    impl_->stop_fulfiller->fulfill();
  }
  if (impl_->thread.joinable()) impl_->thread.join();
}

metrics_server::~metrics_server() {
  stop();
}

uint16_t metrics_server::port() const {
  return impl_->port;
}

} // namespace capstan
