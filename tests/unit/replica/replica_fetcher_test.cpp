// A replica fetcher whose local replica has closed before the fetcher manager unassigned it (the
// node stops, the partition went offline) stops fetching that partition. Found by a node that
// crashed on stop: its truncation round for a closed replica completed without a request and
// pumped the next identical round, until the scheduler thread's stack overflowed.

#include "actors/replica/replica_fetcher_actor.hpp"

#include <functional>
#include <memory>
#include <vector>

#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include "actors/replica/fetch_codec.hpp"
#include "runtime/actor/caf_error.hpp"
#include "tests/support/caf_fixture.hpp"

using namespace capstan;
using namespace capstan::test;

namespace {

// A leader's fetch session that counts the requests and has nothing new for any partition. The
// first fetch's partitions get `first_error`.
fetch_session_actor::behavior_type counting_session(std::shared_ptr<int> requests,
                                                    errc first_error) {
  return {
      [requests, first_error](fetch_atom, const capnp_frame& f) {
        const auto error = ++*requests == 1 ? first_error : errc::none;
        auto fetch = decode_fetch(f);
        std::vector<fetched_partition> parts;
        for (const auto& p : fetch->partitions)
          parts.push_back(fetched_partition{p.tp, error, {}, offset{7}, offset{0}, offset{7}, {}});
        return encode_fetch_response(parts);
      },
      [requests](epochend_atom, const capnp_frame&) {
        ++*requests;
        return capnp_frame{};
      },
      [](notify_atom) {},
      [](tick_atom) {},
  };
}

session_provider::behavior_type sessions_of(fetch_session_actor session) {
  return {[session](session_atom, node_id, const caf::actor&) { return session; }};
}

// A fetcher of node 2 from node 1 (`o` gives the rest), tracked by `fix`, assigned orders-0 at
// offset 7 under `epoch`.
replica_fetcher_actor start_fetcher(caf_fixture& fix, replica_fetcher_options o, leader_epoch epoch,
                                    bool truncate_first = false) {
  o.node = node_id{2};
  o.leader = node_id{1};
  auto fetcher = spawn_replica_fetcher(fix.sys(), o);
  fix.track(fetcher);
  caf::anon_send(fetcher, assign_atom_v,
                 std::vector<fetch_assignment>{{{"orders", 0}, epoch, offset{7}, truncate_first}});
  return fetcher;
}

} // namespace

TEST_CASE("a replica fetcher stops fetching a partition whose local replica has closed",
          "[replica][fetcher]") {
  const bool truncate_first = GENERATE(true, false);
  INFO("truncate first: " << truncate_first);
  caf_fixture fix;
  auto requests = std::make_shared<int>(0);
  replica_fetcher_options o;
  o.sessions = fix.spawn(sessions_of, fix.spawn(counting_session, requests, errc::none));
  auto empty = std::make_shared<const routing_table>();
  o.routes = [empty] { return empty; };
  auto fetcher = start_fetcher(fix, o, leader_epoch{4}, truncate_first);
  fix.run_with_timers(10);

  // Still serving, and it asked the leader nothing more (a fetch already out when the replica
  // closed is the last) for a partition it cannot append to.
  auto unassigned =
      fix.request<bool>(fetcher, unassign_atom_v, std::vector<topic_partition>{{"orders", 0}});
  REQUIRE(unassigned);
  CHECK(*unassigned);
  CHECK(*requests <= (truncate_first ? 0 : 1));
}

namespace {

// A leader's fetch session that takes every request and never answers, as one behind a lost
// link.
fetch_session_actor::behavior_type silent_session(fetch_session_actor::pointer self,
                                                  std::shared_ptr<int> requests) {
  auto hold = [self, requests] {
    ++*requests;
    return self->make_response_promise<capnp_frame>();
  };
  return {
      [hold](fetch_atom, const capnp_frame&) { return hold(); },
      [hold](epochend_atom, const capnp_frame&) { return hold(); },
      [](notify_atom) {},
      [](tick_atom) {},
  };
}

session_provider::behavior_type counting_sessions(fetch_session_actor session,
                                                  std::shared_ptr<int> opened) {
  return {[session, opened](session_atom, node_id, const caf::actor&) {
    ++*opened;
    return session;
  }};
}

} // namespace

TEST_CASE("a replica fetcher whose fetch goes unanswered gives up on it after its wait plus "
          "the request timeout, opens a new session and fetches again",
          "[replica][fetcher]") {
  caf_fixture fix;
  auto requests = std::make_shared<int>(0);
  auto opened = std::make_shared<int>(0);
  replica_fetcher_options o;
  o.config.max_wait_ms = 500;
  o.config.request_timeout_ms = 1000;
  o.config.backoff_ms = 100;
  o.sessions = fix.spawn(counting_sessions, fix.spawn(silent_session, requests), opened);
  auto empty = std::make_shared<const routing_table>();
  o.routes = [empty] { return empty; };
  start_fetcher(fix, o, leader_epoch{4});
  fix.run();
  CHECK(*opened == 1);
  CHECK(*requests == 1);

  // Nothing happens before the deadline...
  fix.advance_time(std::chrono::milliseconds(1400));
  fix.run();
  CHECK(*opened == 1);
  CHECK(*requests == 1);

  // ...and past it (and the back-off) the fetcher starts over.
  fix.advance_time(std::chrono::milliseconds(200));
  fix.run();
  fix.advance_time(std::chrono::milliseconds(200));
  fix.run();
  CHECK(*opened == 2);
  CHECK(*requests == 2);
}

namespace {

// The answer a test replica gives to fetched batches (an empty handler: its log end, 7).
using replicate_handler = std::function<caf::result<offset>(const replicate_request&)>;

// The follower's local replica; most tests only need it to exist.
partition_replica_actor::behavior_type idle_replica(replicate_handler on_replicate) {
  return {
      [](produce_atom, const produce_request&) { return produce_result{}; },
      [](fetch_atom, const fetch_request&) { return fetch_result{}; },
      [](offsets_atom, timestamp_ms) { return list_offsets_result{}; },
      [](info_atom) { return log_info{}; },
      [](status_atom) { return replica_status{}; },
      [](checkpoint_atom) { return replica_checkpoint{}; },
      [](become_atom, const replica_role&) { return true; },
      [](reconfig_atom, const replica_config&) {},
      [](ffetch_atom, const follower_fetch_request&) { return follower_fetch_result{}; },
      [](epochend_atom, leader_epoch, leader_epoch) { return undefined_epoch_end; },
      [](position_atom) { return follower_position{}; },
      [](ftruncate_atom, leader_epoch, epoch_end) { return truncation_decision{}; },
      [on_replicate](replicate_atom, const replicate_request& r) -> caf::result<offset> {
        if (on_replicate) return on_replicate(r);
        return offset{7};
      },
      [](restart_atom, leader_epoch, offset o) { return o; },
      [](close_atom) { return replica_checkpoint{}; },
      [](tick_atom) {},
      [](isrcheck_atom) {},
  };
}

} // namespace

TEST_CASE("a replica fetcher asks again soon when the leader has not yet taken the leadership",
          "[replica][fetcher]") {
  caf_fixture fix;
  auto requests = std::make_shared<int>(0);
  replica_fetcher_options o;
  o.config.backoff_ms = 1000;
  // The leader has not yet applied the leadership the follower names.
  o.sessions =
      fix.spawn(sessions_of, fix.spawn(counting_session, requests, errc::unknown_leader_epoch));
  auto routes = std::make_shared<const routing_table>(
      routing_table{{{"orders", 0}, fix.spawn(idle_replica, replicate_handler{})}});
  o.routes = [routes] { return routes; };
  start_fetcher(fix, o, leader_epoch{5});
  fix.run();
  CHECK(*requests == 1);
  // Well within replica.fetch.backoff.ms, the partition is fetched again.
  fix.advance_time(std::chrono::milliseconds(50));
  fix.run();
  CHECK(*requests >= 2);
}

namespace {

// A leader's fetch session with no records for anyone: the n-th fetch (from 1) is answered with
// the high watermark hws[n - 1]; fetches past the list are held, never answered.
fetch_session_actor::behavior_type scripted_session(fetch_session_actor::pointer self,
                                                    std::shared_ptr<int> requests,
                                                    std::vector<int64_t> hws) {
  return {
      [self, requests, hws](fetch_atom, const capnp_frame& f) -> caf::result<capnp_frame> {
        const auto n = static_cast<size_t>(++*requests);
        if (n > hws.size()) return self->make_response_promise<capnp_frame>();
        const offset hw{hws[n - 1]};
        auto fetch = decode_fetch(f);
        std::vector<fetched_partition> parts;
        for (const auto& p : fetch->partitions)
          parts.push_back(fetched_partition{p.tp, errc::none, {}, hw, offset{0}, offset{9}, {}});
        return encode_fetch_response(parts);
      },
      [](epochend_atom, const capnp_frame&) { return capnp_frame{}; },
      [](notify_atom) {},
      [](tick_atom) {},
  };
}

// The follower's local replica at log end 7, keeping the high watermark of every answer handed
// to it; `refuse` answers each with KAFKA_STORAGE_ERROR, as an offline replica.
partition_replica_actor::behavior_type counting_replica(std::shared_ptr<std::vector<int64_t>> taken,
                                                        bool refuse) {
  return idle_replica([taken, refuse](const replicate_request& r) -> caf::result<offset> {
    taken->push_back(r.leader_high_watermark.value());
    if (refuse) return to_caf_error(make_error(errc::kafka_storage_error, "offline"));
    return offset{7};
  });
}

// A routing table with `replica` as orders-0's.
routing_table_ptr route_to(partition_replica_actor replica) {
  return std::make_shared<const routing_table>(routing_table{{{"orders", 0}, std::move(replica)}});
}

} // namespace

TEST_CASE("a replica fetcher does not hand its replica an empty answer that repeats the high "
          "watermark it took",
          "[replica][fetcher]") {
  caf_fixture fix;
  auto requests = std::make_shared<int>(0);
  auto taken = std::make_shared<std::vector<int64_t>>();
  replica_fetcher_options o;
  o.sessions = fix.spawn(
      sessions_of, fix.spawn(scripted_session, requests, std::vector<int64_t>{5, 5, 5, 7, 7, 7}));
  o.routes = [routes = route_to(fix.spawn(counting_replica, taken, false))] { return routes; };
  start_fetcher(fix, o, leader_epoch{5});
  fix.run();
  CHECK(*requests == 7);
  CHECK(*taken == std::vector<int64_t>{5, 7});
}

TEST_CASE("a replica fetcher hands an empty answer to the replica gone offline that took over the "
          "route, though it repeats what the online one took",
          "[replica][fetcher]") {
  caf_fixture fix;
  auto requests = std::make_shared<int>(0);
  auto online = std::make_shared<std::vector<int64_t>>();
  auto offline = std::make_shared<std::vector<int64_t>>();
  replica_fetcher_options o;
  o.sessions =
      fix.spawn(sessions_of, fix.spawn(scripted_session, requests, std::vector<int64_t>{5, 5, 5}));
  // After the second fetch the route names the offline replica the node swapped in.
  auto before = route_to(fix.spawn(counting_replica, online, false));
  auto after = route_to(fix.spawn(counting_replica, offline, true));
  o.routes = [requests, before, after] { return *requests <= 2 ? before : after; };
  start_fetcher(fix, o, leader_epoch{5});
  fix.run();
  CHECK(*online == std::vector<int64_t>{5});
  CHECK(*offline == std::vector<int64_t>{5});
}
