// A fetch session parks a fetch that found nothing and answers it at its own deadline. One timer
// serves the session: armed for the earliest deadline, moved earlier for a shorter wait, armed
// again for the next fetch once it fired.

#include "actors/replica/fetch_session_actor.hpp"

#include <memory>
#include <vector>

#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include "actors/replica/fetch_codec.hpp"
#include "tests/support/caf_fixture.hpp"

using namespace capstan;
using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

constexpr node_id follower{2};

capnp_frame fetch_waiting(int32_t max_wait_ms) {
  fetch_message m;
  m.replica = follower;
  m.max_wait_ms = max_wait_ms;
  m.min_bytes = 1;
  // No replica of it on this node: nothing is found, so the fetch parks.
  m.partitions.push_back(fetch_partition{{"orders", 0}, leader_epoch{1}, offset{0}});
  return encode_fetch(m);
}

caf::behavior idle_fetcher() {
  return {[](int) {}};
}

struct session_fixture {
  caf_fixture fix;
  fetch_session_actor session;
  std::shared_ptr<std::vector<int>> answered = std::make_shared<std::vector<int>>();

  session_fixture() {
    fetch_session_options o;
    o.node = node_id{1};
    o.follower = follower;
    o.fetcher = fix.spawn(idle_fetcher);
    auto empty = std::make_shared<const routing_table>();
    o.routes = [empty] { return empty; };
    session = spawn_fetch_session(fix.sys(), o);
    fix.track(session);
  }

  // Sends a fetch that waits up to `max_wait_ms`; its answer adds `id` to `answered`.
  void fetch(int id, int32_t max_wait_ms) {
    fix.sys().spawn([s = session, id, max_wait_ms, out = answered](caf::event_based_actor* self) {
      self->request(s, caf::infinite, fetch_atom_v, fetch_waiting(max_wait_ms))
          .then([id, out](const capnp_frame&) { out->push_back(id); });
    });
    fix.run();
  }
};

} // namespace

TEST_CASE("a fetch session answers each parked fetch at its own deadline",
          "[replica][fetch_session]") {
  session_fixture f;
  f.fetch(1, 60000);
  CHECK(f.answered->empty());

  // A newer fetch answers the parked one at once and parks with a shorter wait.
  f.fetch(2, 50);
  CHECK(*f.answered == std::vector<int>{1});
  f.fix.advance_time(49ms);
  CHECK(*f.answered == std::vector<int>{1});
  f.fix.advance_time(1ms);
  CHECK(*f.answered == std::vector<int>{1, 2});

  // The next one gets a timer of its own, though the 60 s one is still set.
  f.fetch(3, 100);
  f.fix.advance_time(99ms);
  CHECK(*f.answered == std::vector<int>{1, 2});
  f.fix.advance_time(1ms);
  CHECK(*f.answered == std::vector<int>{1, 2, 3});
}
