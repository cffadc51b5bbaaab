// The node endpoint hands a peer's Raft frames to the node's controller quorum (its raft sink),
// and drops them when the node runs no controller; nodes' requests to the controller go to the
// node's controller actor, or are refused with NOT_CONTROLLER when it runs none.

#include "actors/replica/node_endpoint_actor.hpp"

#include <memory>

#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include "actors/controller/controller_codec.hpp"
#include "runtime/actor/caf_error.hpp"
#include "runtime/cluster/link_faults.hpp"
#include "schema/raft.capnp.h"
#include "tests/support/caf_fixture.hpp"

using namespace capstan;
using namespace capstan::test;

namespace {

raft_sink::behavior_type counting_sink(std::shared_ptr<int> frames) {
  return {[frames](raft_atom, const capnp_frame&) { ++*frames; }};
}

// Answers every controller request with its own frame, marked by the atom it came with.
controller_request_sink::behavior_type echo_controller() {
  return {
      [](brokerreg_atom, const capnp_frame& f) { return f; },
      [](brokerhb_atom, const capnp_frame& f) { return f; },
      [](mktopic_atom, const capnp_frame& f) { return f; },
      [](rmtopic_atom, const capnp_frame& f) { return f; },
      [](altercfg_atom, const capnp_frame& f) { return f; },
      [](allocpid_atom, const capnp_frame& f) { return f; },
      [](mkparts_atom, const capnp_frame& f) { return f; },
      [](elect_atom, const capnp_frame& f) { return f; },
      [](reassign_atom, const capnp_frame& f) { return f; },
      [](unregister_atom, const capnp_frame& f) { return f; },
      [](add_voter_atom, const capnp_frame& f) { return f; },
      [](remove_voter_atom, const capnp_frame& f) { return f; },
      [](descquorum_atom) { return capnp_frame{}; },
  };
}

capnp_frame raft_from(int32_t from) {
  capnp::MallocMessageBuilder builder;
  builder.initRoot<schema::RaftMessage>().setFrom(from);
  return capnp_frame::from_builder(builder);
}

} // namespace

TEST_CASE("the node endpoint drops Raft frames from a node the fault switch cuts off",
          "[replica][endpoint][fault]") {
  link_faults::instance().clear_all();
  caf_fixture fix;
  auto frames = std::make_shared<int>(0);
  node_endpoint_options o;
  o.node = node_id{1};
  o.raft = fix.spawn(counting_sink, frames);
  auto endpoint = spawn_node_endpoint(fix.sys(), o);
  fix.track(endpoint);
  // Set in this process only, as a real node's switch is: the sender never checked.
  link_faults::instance().drop(node_id{2}, node_id{1});
  caf::anon_send(endpoint, raft_atom_v, raft_from(2));
  caf::anon_send(endpoint, raft_atom_v, raft_from(3));
  fix.run();
  CHECK(*frames == 1);
  link_faults::instance().clear_all();
  caf::anon_send(endpoint, raft_atom_v, raft_from(2));
  fix.run();
  CHECK(*frames == 2);
}

TEST_CASE("the node endpoint hands Raft frames to its raft sink", "[replica][endpoint]") {
  caf_fixture fix;
  auto frames = std::make_shared<int>(0);
  node_endpoint_options o;
  o.raft = fix.spawn(counting_sink, frames);
  auto endpoint = spawn_node_endpoint(fix.sys(), o);
  fix.track(endpoint);
  caf::anon_send(endpoint, raft_atom_v, capnp_frame{});
  caf::anon_send(endpoint, raft_atom_v, capnp_frame{});
  fix.run();
  CHECK(*frames == 2);
}

TEST_CASE("a node endpoint without a raft sink drops Raft frames and keeps serving",
          "[replica][endpoint]") {
  caf_fixture fix;
  auto endpoint = spawn_node_endpoint(fix.sys(), node_endpoint_options{});
  fix.track(endpoint);
  caf::anon_send(endpoint, raft_atom_v, capnp_frame{});
  fix.run();
  // Still answering: a session request without a fetcher is refused, not lost.
  auto r = fix.request<caf::actor>(endpoint, open_atom_v, int32_t{1}, caf::actor{});
  REQUIRE(!r);
  CHECK(from_caf_error(r.error()).code == errc::invalid_request);
}

TEST_CASE("the node endpoint hands nodes' controller requests to its controller, and refuses them "
          "with NOT_CONTROLLER without one",
          "[replica][endpoint]") {
  caf_fixture fix;
  node_endpoint_options with;
  with.controller = fix.spawn(echo_controller);
  auto voter = spawn_node_endpoint(fix.sys(), with);
  fix.track(voter);
  auto answered = fix.request<capnp_frame>(voter, brokerhb_atom_v, capnp_frame{});
  CHECK(answered);

  auto plain = spawn_node_endpoint(fix.sys(), node_endpoint_options{});
  fix.track(plain);
  auto refused = fix.request<capnp_frame>(plain, brokerreg_atom_v, capnp_frame{});
  REQUIRE(!refused);
  CHECK(from_caf_error(refused.error()).code == errc::not_controller);
}

TEST_CASE("the node endpoint drops every controller request from a node the fault switch cuts off",
          "[replica][endpoint][fault]") {
  link_faults::instance().clear_all();
  caf_fixture fix;
  node_endpoint_options o;
  o.node = node_id{1};
  o.controller = fix.spawn(echo_controller);
  auto endpoint = spawn_node_endpoint(fix.sys(), o);
  fix.track(endpoint);
  // Set in this process only, as a real node's switch is: the sender never checked.
  link_faults::instance().drop(node_id{2}, node_id{1});
  auto answered = [&](int32_t from) {
    const node_id sender{from};
    std::vector<bool> out;
    out.push_back(static_cast<bool>(fix.request<capnp_frame>(
        endpoint, mktopic_atom_v, encode(topic_spec{"t", 1, 1, {}}, sender))));
    out.push_back(static_cast<bool>(
        fix.request<capnp_frame>(endpoint, rmtopic_atom_v, encode(delete_topic_msg{"t"}, sender))));
    out.push_back(static_cast<bool>(fix.request<capnp_frame>(
        endpoint, altercfg_atom_v, encode(alter_configs_msg{"t", {}}, sender))));
    out.push_back(static_cast<bool>(fix.request<capnp_frame>(
        endpoint, mkparts_atom_v, encode(create_partitions_msg{"t", 2}, sender))));
    out.push_back(static_cast<bool>(
        fix.request<capnp_frame>(endpoint, elect_atom_v, encode(elect_leaders_msg{}, sender))));
    out.push_back(static_cast<bool>(fix.request<capnp_frame>(endpoint, descquorum_atom_v, from)));
    return out;
  };
  CHECK(answered(2) == std::vector<bool>(6, false));
  CHECK(answered(3) == std::vector<bool>(6, true));
  link_faults::instance().clear_all();
  CHECK(answered(2) == std::vector<bool>(6, true));
}

TEST_CASE("the node endpoint tells another node where its directory says a node listens",
          "[replica][endpoint][directory]") {
  link_faults::instance().clear_all();
  caf_fixture fix;
  peer_directory_options d;
  d.node = node_id{1};
  d.peers.push_back(peer_address{node_id{4}, "10.0.0.4", 9193});
  auto directory = spawn_peer_directory(fix.sys(), d);
  fix.track(directory);
  node_endpoint_options o;
  o.node = node_id{1};
  o.directory = directory;
  auto endpoint = spawn_node_endpoint(fix.sys(), o);
  fix.track(endpoint);

  auto known = fix.request<std::string, uint16_t>(endpoint, locate_atom_v, 2, 4);
  REQUIRE(known);
  CHECK(std::get<0>(*known) == "10.0.0.4");
  CHECK(std::get<1>(*known) == 9193);
  auto unknown = fix.request<std::string, uint16_t>(endpoint, locate_atom_v, 2, 5);
  REQUIRE_FALSE(unknown);
  CHECK(from_caf_error(unknown.error()).code == errc::network_exception);

  // A node the fault switch cuts off is not answered, as for every other request.
  link_faults::instance().drop(node_id{2}, node_id{1});
  CHECK_FALSE(fix.request<std::string, uint16_t>(endpoint, locate_atom_v, 2, 4));
  link_faults::instance().clear_all();

  // An endpoint without a directory locates nobody.
  node_endpoint_options bare;
  bare.node = node_id{1};
  auto lone = spawn_node_endpoint(fix.sys(), bare);
  fix.track(lone);
  auto refused = fix.request<std::string, uint16_t>(lone, locate_atom_v, 2, 4);
  REQUIRE_FALSE(refused);
  CHECK(from_caf_error(refused.error()).code == errc::network_exception);
}
