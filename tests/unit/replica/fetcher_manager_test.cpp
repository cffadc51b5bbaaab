// The fetcher manager places each followed partition on exactly one fetcher, the one of the
// assignment that reached it last, however assignments and unassignments overlap while an old
// fetcher confirms that it let go.

#include "actors/replica/fetcher_manager_actor.hpp"

#include <memory>
#include <set>

#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include "tests/support/caf_fixture.hpp"

using namespace capstan;
using namespace capstan::test;

namespace {

// A leader's fetch session that holds every request: the fetchers stay busy and quiet.
fetch_session_actor::behavior_type holding_session(fetch_session_actor::pointer self) {
  auto hold = [self] { return self->make_response_promise<capnp_frame>(); };
  return {
      [hold](fetch_atom, const capnp_frame&) { return hold(); },
      [hold](epochend_atom, const capnp_frame&) { return hold(); },
      [](notify_atom) {},
      [](tick_atom) {},
  };
}

// Records the leader of every fetcher that asks for a session: one per fetcher started.
session_provider::behavior_type recording_sessions(fetch_session_actor session,
                                                   std::shared_ptr<std::multiset<int32_t>> asked) {
  return {[session, asked](session_atom, node_id leader, const caf::actor&) {
    asked->insert(leader.value());
    return session;
  }};
}

std::vector<fetch_assignment> orders_at(int32_t epoch) {
  return {{{"orders", 0}, leader_epoch{epoch}, offset{0}, true}};
}

} // namespace

TEST_CASE("overlapping assignments of one partition leave it on the fetcher of the last one",
          "[replica][fetcher]") {
  caf_fixture fix;
  auto asked = std::make_shared<std::multiset<int32_t>>();
  fetcher_manager_options o;
  o.node = node_id{2};
  o.sessions = fix.spawn(recording_sessions, fix.spawn(holding_session), asked);
  auto empty = std::make_shared<const routing_table>();
  o.routes = [empty] { return empty; };
  auto manager = spawn_fetcher_manager(fix.sys(), o);
  fix.track(manager);
  REQUIRE(fix.request<bool>(manager, assign_atom_v, int32_t{1}, orders_at(4)));
  REQUIRE(asked->count(1) == 1);

  // Node 3 is named, then node 4, before node 1's fetcher confirmed that it let go: node 4's
  // assignment is the last, so only a fetcher towards node 4 may follow the partition.
  caf::anon_send(manager, assign_atom_v, int32_t{3}, orders_at(5));
  caf::anon_send(manager, assign_atom_v, int32_t{4}, orders_at(6));
  fix.run();
  CHECK(asked->count(4) == 1);
  CHECK(asked->count(3) == 0);

  // An unassignment overtaking an assignment in progress wins over it the same way.
  caf::anon_send(manager, assign_atom_v, int32_t{5}, orders_at(7));
  caf::anon_send(manager, unassign_atom_v, std::vector<topic_partition>{{"orders", 0}});
  fix.run();
  CHECK(asked->count(5) == 0);
}
