// accept_forever against a listener that fails the way kj's does when the process is out of file
// descriptors: accept() throws before it returns a promise.

#include "actors/gateway/accept_loop.hpp"

#include <catch2/catch.hpp>
#include <kj/debug.h>
#include <kj/vector.h>

using namespace capstan;

namespace {

// Fails its first accepts (synchronously, then through a rejected promise), then hands out one
// end of a fresh pipe per accept, three times; later accepts never complete.
class failing_listener final : public kj::ConnectionReceiver {
public:
  failing_listener(kj::AsyncIoProvider& io, int sync_failures, int async_failures)
      : io_(io), sync_failures_(sync_failures), async_failures_(async_failures) {}

  kj::Promise<kj::Own<kj::AsyncIoStream>> accept() override {
    ++calls;
    if (sync_failures_ > 0) {
      --sync_failures_;
      KJ_FAIL_SYSCALL("accept", EMFILE);
    }
    if (async_failures_ > 0) {
      --async_failures_;
      return KJ_EXCEPTION(FAILED, "accept failed later");
    }
    if (peers.size() == 3) return kj::NEVER_DONE;
    auto pipe = io_.newTwoWayPipe();
    peers.add(kj::mv(pipe.ends[1]));
    return kj::mv(pipe.ends[0]);
  }
  uint getPort() override { return 0; }

  int calls = 0;
  kj::Vector<kj::Own<kj::AsyncIoStream>> peers;

private:
  kj::AsyncIoProvider& io_;
  int sync_failures_;
  int async_failures_;
};

} // namespace

TEST_CASE("accepting goes on after accept() throws or fails", "[gateway][accept]") {
  auto io = kj::setupAsyncIo();
  failing_listener listener(*io.provider, 2, 1);
  int served = 0;
  int failures = 0;
  auto loop =
      accept_forever(
          listener, io.provider->getTimer(), [&served](kj::Own<kj::AsyncIoStream>) { ++served; },
          [&failures](const kj::Exception&) { ++failures; }, 1 * kj::MILLISECONDS)
          .eagerlyEvaluate(nullptr);
  for (int i = 0; i < 10000 && served < 3; ++i)
    io.provider->getTimer().afterDelay(1 * kj::MILLISECONDS).wait(io.waitScope);
  CHECK(failures == 3);
  CHECK(served == 3);
}

TEST_CASE("a serve function that throws does not end accepting", "[gateway][accept]") {
  auto io = kj::setupAsyncIo();
  failing_listener listener(*io.provider, 0, 0);
  int served = 0;
  int failures = 0;
  auto loop = accept_forever(
                  listener, io.provider->getTimer(),
                  [&served](kj::Own<kj::AsyncIoStream>) {
                    if (++served == 1)
                      KJ_FAIL_REQUIRE("the first connection is refused by throwing");
                  },
                  [&failures](const kj::Exception&) { ++failures; }, 1 * kj::MILLISECONDS)
                  .eagerlyEvaluate(nullptr);
  for (int i = 0; i < 10000 && served < 3; ++i)
    io.provider->getTimer().afterDelay(1 * kj::MILLISECONDS).wait(io.waitScope);
  CHECK(failures == 1);
  CHECK(served == 3);
}
