// A node's controller client goes to the voter that last answered as the active controller, and
// follows a NOT_CONTROLLER refusal that names the controller at once. Before, every request
// started at the first voter and waited retry_backoff after its refusal: on a node whose first
// voter did not lead, each createTopic, deleteTopic or first initProducerId paid 100 ms.

#include "actors/controller/controller_client_actor.hpp"

#include <map>
#include <memory>

#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include "runtime/cluster/link_faults.hpp"
#include "tests/support/caf_fixture.hpp"

using namespace capstan;
using namespace capstan::test;

namespace {

// A voter's controller: the active one (node 2) deletes any topic; the others refuse, naming it.
controller_request_sink::behavior_type voter(int32_t node,
                                             std::shared_ptr<std::map<int, int>> asked) {
  auto answer = [node, asked] {
    ++(*asked)[node];
    topic_response_msg m;
    if (node != 2) {
      m.error = errc::not_controller;
      m.message = "not the active controller";
      m.leader_hint = 2;
    }
    return encode(m);
  };
  auto refuse = [](const capnp_frame&) { return capnp_frame{}; };
  return {
      [refuse](brokerreg_atom, const capnp_frame& f) { return refuse(f); },
      [refuse](brokerhb_atom, const capnp_frame& f) { return refuse(f); },
      [refuse](mktopic_atom, const capnp_frame& f) { return refuse(f); },
      [answer](rmtopic_atom, const capnp_frame&) { return answer(); },
      [refuse](altercfg_atom, const capnp_frame& f) { return refuse(f); },
      [refuse](allocpid_atom, const capnp_frame& f) { return refuse(f); },
      [refuse](mkparts_atom, const capnp_frame& f) { return refuse(f); },
      [refuse](elect_atom, const capnp_frame& f) { return refuse(f); },
      [refuse](reassign_atom, const capnp_frame& f) { return refuse(f); },
      [refuse](unregister_atom, const capnp_frame& f) { return refuse(f); },
      [answer](add_voter_atom, const capnp_frame&) { return answer(); },
      [answer](remove_voter_atom, const capnp_frame&) { return answer(); },
      [](descquorum_atom) { return capnp_frame{}; },
  };
}

peer_directory_actor::behavior_type directory(std::map<int, node_endpoint_actor> endpoints) {
  return {
      [](session_atom, node_id, const caf::actor&) -> caf::result<fetch_session_actor> {
        return caf::make_error(caf::sec::unexpected_message);
      },
      [endpoints](endpoint_atom, node_id n) -> caf::result<node_endpoint_actor> {
        return endpoints.at(n.value());
      },
      [](peers_atom, const std::vector<peer_address>&) {},
      [](locate_atom, node_id) -> caf::result<std::string, uint16_t> {
        return caf::make_error(caf::sec::unexpected_message);
      },
  };
}

} // namespace

TEST_CASE("a controller client asks the known active controller first and follows a refusal "
          "naming it without a pause",
          "[controller][client]") {
  link_faults::instance().clear_all();
  caf_fixture fix;
  auto asked = std::make_shared<std::map<int, int>>();
  std::map<int, node_endpoint_actor> endpoints;
  controller_client_options o;
  o.node = node_id{4};
  for (int n : {1, 2, 3}) {
    node_endpoint_options e;
    e.node = node_id{n};
    e.controller = fix.spawn(voter, n, asked);
    endpoints[n] = spawn_node_endpoint(fix.sys(), e);
    fix.track(endpoints[n]);
    o.voters.push_back(peer_address{node_id{n}, "127.0.0.1", static_cast<uint16_t>(9000 + n)});
  }
  o.peers = fix.spawn(directory, endpoints);
  auto client = spawn_controller_client(fix.sys(), o);
  fix.track(client);

  // The first asks voter 1, which names voter 2; voter 2 is asked at once (no timer runs here:
  // a retry pause would leave the request unanswered).
  auto first = fix.request<bool>(client, rmtopic_atom_v, std::string{"a"});
  REQUIRE(first);
  CHECK(*first);
  CHECK(*asked == std::map<int, int>{{1, 1}, {2, 1}});

  // The next ones go straight to voter 2.
  for (const char* topic : {"b", "c"}) {
    auto next = fix.request<bool>(client, rmtopic_atom_v, std::string{topic});
    REQUIRE(next);
    CHECK(*next);
  }
  CHECK(*asked == std::map<int, int>{{1, 1}, {2, 3}});
}

TEST_CASE("a controller client sends voter changes to the active controller, following its "
          "refusals",
          "[controller][client][voters]") {
  link_faults::instance().clear_all();
  caf_fixture fix;
  auto asked = std::make_shared<std::map<int, int>>();
  std::map<int, node_endpoint_actor> endpoints;
  controller_client_options o;
  o.node = node_id{4};
  for (int n : {1, 2, 3}) {
    node_endpoint_options e;
    e.node = node_id{n};
    e.controller = fix.spawn(voter, n, asked);
    endpoints[n] = spawn_node_endpoint(fix.sys(), e);
    fix.track(endpoints[n]);
    o.voters.push_back(peer_address{node_id{n}, "127.0.0.1", static_cast<uint16_t>(9000 + n)});
  }
  o.peers = fix.spawn(directory, endpoints);
  auto client = spawn_controller_client(fix.sys(), o);
  fix.track(client);

  auto added = fix.request<bool>(client, add_voter_atom_v, int32_t{5}, std::string{"h:9005"});
  REQUIRE(added);
  CHECK(*added);
  CHECK(*asked == std::map<int, int>{{1, 1}, {2, 1}});
  auto removed = fix.request<bool>(client, remove_voter_atom_v, int32_t{3});
  REQUIRE(removed);
  CHECK(*removed);
  CHECK(*asked == std::map<int, int>{{1, 1}, {2, 2}});
}
