#pragma once

// Actor systems for Catch2 tests.
//
// caf_fixture: one actor system on CAF's testing scheduler. Nothing runs until the test says so
// (run, run_once, advance_time), and time is simulated, so actor tests are deterministic and
// never wait on the wall clock. Its destructor drains every job, kills the actors spawned through
// it and fires the remaining timers, so a failed REQUIRE (an exception) cannot hang
// ~actor_system. An actor spawned around the fixture (sys().spawn) must end by itself or be
// killed by the test; its children end with it when nothing else references them.
//
// threaded_system: a real actor system (worker threads, middleman) for cluster tests, with a
// request helper bounded by a timeout and a destructor that kills the actors it tracks first
// (a published live actor would otherwise hang ~actor_system forever).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <caf/actor_addr.hpp>
#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/expected.hpp>
#include <caf/io/middleman.hpp>
#include <caf/make_message.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/sec.hpp>
#include <caf/send.hpp>
#include <caf/timespan.hpp>

#include "runtime/actor/actor_system_setup.hpp"

namespace capstan::test {

namespace detail {

template <class... Rs>
struct reply_of {
  using type = std::tuple<Rs...>;
};
template <>
struct reply_of<> {
  using type = void;
};
template <class R>
struct reply_of<R> {
  using type = R;
};

} // namespace detail

// What a request for reply types Rs... yields: void for none, R for one, a tuple for several.
template <class... Rs>
using reply_t = typename detail::reply_of<Rs...>::type;

namespace detail {

// Stores the reply (or error) to a request in `slot`; the handler pair for `.then`/`.receive`.
template <class... Rs>
auto reply_handler(std::shared_ptr<std::optional<caf::expected<reply_t<Rs...>>>> slot) {
  return [slot](Rs&... rs) {
    if constexpr (sizeof...(Rs) == 0)
      slot->emplace();
    else if constexpr (sizeof...(Rs) == 1)
      slot->emplace(std::move(rs)...);
    else
      slot->emplace(std::make_tuple(std::move(rs)...));
  };
}

template <class... Rs>
auto error_handler(std::shared_ptr<std::optional<caf::expected<reply_t<Rs...>>>> slot) {
  return [slot](caf::error& err) { slot->emplace(std::move(err)); };
}

} // namespace detail

class caf_fixture {
public:
  // Simulated time a request() waits for its reply; only matters if a test advances the clock
  // past it or the fixture ends while the request is pending.
  static constexpr caf::timespan request_timeout = std::chrono::seconds(60);

  // `extra_types`: further message type registrars (runtime/actor/actor_system_setup.hpp).
  explicit caf_fixture(std::vector<type_registrar> extra_types = {});
  virtual ~caf_fixture();

  caf_fixture(const caf_fixture&) = delete;
  caf_fixture& operator=(const caf_fixture&) = delete;
  caf_fixture(caf_fixture&&) = delete;
  caf_fixture& operator=(caf_fixture&&) = delete;

  caf::actor_system& sys() { return sys_; }
  caf::scheduler::test_coordinator& sched() { return sched_; }

  // Runs one job (one message of one actor). Returns false iff no job was ready.
  bool run_once();

  // Runs jobs until none is ready; timers do not fire. Returns the number of jobs run.
  size_t run();

  // Like run(), then fires pending timers one at a time (the clock jumps to each), draining
  // after each, until nothing is pending or `max_timeouts` fired (a self-re-arming timer never
  // runs dry; use advance_time for those). Returns jobs run plus timeouts fired.
  size_t run_with_timers(size_t max_timeouts = 1000);

  // Moves the simulated clock forward by `d`, firing every timer due on the way in time order and
  // draining after each (a 100 ms periodic timer fires twice in a 250 ms advance). Returns the
  // number of timeouts fired.
  size_t advance_time(caf::timespan d);

  // Spawns like actor_system::spawn and remembers the actor so the destructor can kill it.
  template <class... Ts>
  auto spawn(Ts&&... xs) {
    auto hdl = sys_.spawn(std::forward<Ts>(xs)...);
    track(hdl);
    return hdl;
  }
  template <class T, class... Ts>
  auto spawn(Ts&&... xs) {
    auto hdl = sys_.spawn<T>(std::forward<Ts>(xs)...);
    track(hdl);
    return hdl;
  }

  template <class Handle>
  void track(const Handle& hdl) {
    tracked_.push_back(caf::actor_cast<caf::actor_addr>(hdl));
  }

  // Sends a request from a helper actor, run()s, and returns the reply or error. If the reply
  // is still outstanding after run() (the receiver waits on a timer or never answers), returns
  // sec::request_timeout; the helper then ends with its own request timeout.
  template <class... Rs, class Handle, class... Ts>
  caf::expected<reply_t<Rs...>> request(const Handle& dest, Ts&&... xs) {
    auto slot = std::make_shared<std::optional<caf::expected<reply_t<Rs...>>>>();
    sys_.spawn([slot, dest, args = std::make_tuple(std::decay_t<Ts>(std::forward<Ts>(xs))...)](
                 caf::event_based_actor* self) {
      std::apply([&](auto&... as) { return self->request(dest, request_timeout, as...); }, args)
        .then(detail::reply_handler<Rs...>(slot), detail::error_handler<Rs...>(slot));
    });
    run();
    if (!slot->has_value())
      return caf::make_error(caf::sec::request_timeout, "no reply after draining all jobs");
    return std::move(**slot);
  }

  // The actor behind `hdl` as T, e.g. deref<caf::stateful_actor<my_state>>(h).state.
  // REQUIRES: the actor is local and alive, and its type is T.
  template <class T, class Handle>
  T& deref(const Handle& hdl) {
    auto* ptr = dynamic_cast<T*>(caf::actor_cast<caf::abstract_actor*>(hdl));
    if (ptr == nullptr)
      throw std::logic_error("caf_fixture::deref: actor is not of the requested type");
    return *ptr;
  }

private:
  static caf::actor_system_config& testing_config(actor_config& cfg);
  // Runs at most `limit` jobs, so two actors messaging each other forever cannot hang a test.
  size_t drain(size_t limit);

  actor_config cfg_;
  caf::actor_system sys_;
  caf::scheduler::test_coordinator& sched_;
  std::vector<caf::actor_addr> tracked_;
};

class threaded_system {
public:
  // Defaults: middleman loaded, 2 scheduler threads.
  explicit threaded_system(actor_config_options options = {});
  // Kills every tracked actor, then lets ~actor_system wait for them.
  ~threaded_system();

  threaded_system(const threaded_system&) = delete;
  threaded_system& operator=(const threaded_system&) = delete;
  threaded_system(threaded_system&&) = delete;
  threaded_system& operator=(threaded_system&&) = delete;

  caf::actor_system& sys() { return sys_; }

  template <class... Ts>
  auto spawn(Ts&&... xs) {
    auto hdl = sys_.spawn(std::forward<Ts>(xs)...);
    track(hdl);
    return hdl;
  }
  template <class T, class... Ts>
  auto spawn(Ts&&... xs) {
    auto hdl = sys_.spawn<T>(std::forward<Ts>(xs)...);
    track(hdl);
    return hdl;
  }

  template <class Handle>
  void track(const Handle& hdl) {
    tracked_.push_back(caf::actor_cast<caf::actor_addr>(hdl));
  }

  // Sends a request from a scoped actor and blocks until the reply, an error, or `timeout`
  // (then sec::request_timeout).
  template <class... Rs, class Handle, class... Ts>
  caf::expected<reply_t<Rs...>> request(const Handle& dest, caf::timespan timeout, Ts&&... xs) {
    auto slot = std::make_shared<std::optional<caf::expected<reply_t<Rs...>>>>();
    caf::scoped_actor self{sys_};
    self->request(dest, timeout, std::forward<Ts>(xs)...)
      .receive(detail::reply_handler<Rs...>(slot), detail::error_handler<Rs...>(slot));
    if (!slot->has_value())
      return caf::make_error(caf::sec::request_timeout, "no reply");
    return std::move(**slot);
  }

  // Publishes `hdl` on 127.0.0.1 at an ephemeral port; returns the port. Tracks `hdl`.
  template <class Handle>
  caf::expected<uint16_t> publish(const Handle& hdl, uint16_t port = 0) {
    track(hdl);
    return sys_.middleman().publish(hdl, port, "127.0.0.1", true);
  }

  // Connects to the actor published on 127.0.0.1:`port` (bounded by the middleman's own
  // connection timeout).
  template <class Handle = caf::actor>
  caf::expected<Handle> remote_actor(uint16_t port) {
    return sys_.middleman().remote_actor<Handle>("127.0.0.1", port);
  }

private:
  actor_config cfg_;
  caf::actor_system sys_;
  std::vector<caf::actor_addr> tracked_;
};

} // namespace capstan::test
