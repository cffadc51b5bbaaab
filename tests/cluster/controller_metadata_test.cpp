// A node's client gateway answering from the controller's UpdateMetadata (its metadata cache):
// nodes of a replication_harness placed by the test controller, the client RPC server started on
// a follower, and the client library asking it.

#include <catch2/catch.hpp>

#include "actors/gateway/rpc_server.hpp"
#include "runtime/client/cluster_client.hpp"
#include "tests/support/replication_harness.hpp"

using namespace capstan;
using namespace capstan::test;

namespace {

const topic_partition tp{"placed", 0};

// The client RPC server of one harness node, wired as `capstan node` wires it, minus the node's
// own metadata actor: every call this test makes is answered from the metadata cache.
std::unique_ptr<rpc_server> serve_clients(harness_node& n) {
  rpc_targets targets;
  targets.routes = [r = n.routes] { return r->current(); };
  targets.controller_metadata = [m = n.metadata] { return m->current(); };
  auto server = rpc_server::start(n.system->sys(), targets, "127.0.0.1", 0);
  if (!server) FAIL("rpc server: " << server.err().to_string());
  return std::move(*server);
}

std::unique_ptr<client::cluster_client> connect(const rpc_server& server) {
  client::client_config c;
  c.bootstrap = {"127.0.0.1:" + std::to_string(server.port())};
  c.request_timeout_ms = 10000;
  auto client = client::cluster_client::connect(c);
  if (!client) FAIL("client: " << client.err().to_string());
  return std::move(*client);
}

partition_assignment placed_partition(client::cluster_client& client) {
  auto md = client.metadata({tp.first});
  INFO((md ? std::string() : md.err().to_string()));
  REQUIRE(md);
  REQUIRE(md->topics.count(tp.first) == 1);
  REQUIRE(md->topics.at(tp.first).partitions.size() == 1);
  return md->topics.at(tp.first).partitions[0];
}

} // namespace

TEST_CASE("after the controller's UpdateMetadata a follower's Metadata lists the placed topic with "
          "its leader, and a stale controller changes nothing",
          "[cluster][metadata_cache]") {
  replication_harness h(harness_options{});
  h.topic(tp.first, {{"min.insync.replicas", "2"}});
  h.elect(tp, 1, 1, {1, 2, 3}, {1, 2, 3});
  auto server = serve_clients(h.node(2));
  auto client = connect(*server);

  auto md = client->metadata({tp.first});
  REQUIRE(md);
  CHECK(md->controller_id == 0);
  CHECK(md->brokers.size() == 3);
  auto p = placed_partition(*client);
  CHECK(p.leader == 1);
  CHECK(p.leader_epoch == 1);
  CHECK(p.replicas == std::vector<int32_t>{1, 2, 3});
  CHECK(p.isr == std::vector<int32_t>{1, 2, 3});
  auto topics = client->list_topics();
  REQUIRE(topics);
  CHECK(*topics == std::vector<std::string>{tp.first});
  auto configs = client->describe_configs(tp.first);
  REQUIRE(configs);
  CHECK(configs->at("min.insync.replicas") == "2");

  // A new leader: the controller's UpdateMetadata after the LeaderAndIsr moves it.
  h.elect(tp, 3, 2, {1, 2, 3}, {3, 2, 1});
  p = placed_partition(*client);
  CHECK(p.leader == 3);
  CHECK(p.leader_epoch == 2);
  CHECK(p.isr == std::vector<int32_t>{3, 2, 1});

  // A controller at an older epoch: its LeaderAndIsr and its UpdateMetadata are refused whole.
  const auto before = h.node(2).metadata->current();
  auto stale = h.try_elect_as(0, tp, 2, 4, {1, 2, 3}, {1, 2, 3});
  REQUIRE(stale.size() == 3);
  for (const auto& e : stale) CHECK(e.error == errc::stale_controller_epoch);
  CHECK(h.node(2).metadata->current() == before);
  p = placed_partition(*client);
  CHECK(p.leader == 3);
  CHECK(p.leader_epoch == 2);

  client.reset();
  server->stop();
}
