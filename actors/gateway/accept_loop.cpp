#include "actors/gateway/accept_loop.hpp"

#include <kj/debug.h>

namespace capstan {

namespace {

struct acceptor {
  kj::ConnectionReceiver& listener;
  kj::Timer& timer;
  kj::Function<void(kj::Own<kj::AsyncIoStream>)> serve;
  kj::Function<void(const kj::Exception&)> failed;
  kj::Duration pause;

  kj::Promise<void> loop() {
    // evalNow turns a synchronous throw from accept() into a rejection the catch_ below sees.
    return kj::evalNow([this] { return listener.accept(); })
        .then([this](kj::Own<kj::AsyncIoStream>&& socket) { serve(kj::mv(socket)); })
        .catch_([this](kj::Exception&& e) -> kj::Promise<void> {
          failed(e);
          return timer.afterDelay(pause);
        })
        .then([this] { return loop(); });
  }
};

} // namespace

kj::Promise<void> accept_forever(kj::ConnectionReceiver& listener, kj::Timer& timer,
                                 kj::Function<void(kj::Own<kj::AsyncIoStream>)> serve,
                                 kj::Function<void(const kj::Exception&)> failed,
                                 kj::Duration pause) {
  auto state = kj::heap<acceptor>(acceptor{listener, timer, kj::mv(serve), kj::mv(failed), pause});
  auto& ref = *state;
  return ref.loop().attach(kj::mv(state));
}

} // namespace capstan
