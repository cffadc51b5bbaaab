// initProducerId against real `capstan node` processes with their own controller quorum (three
// voters and a broker-only node): clients connected to different nodes get different producer
// ids, each node handing out ids from a block the active controller allocated to it, and ids
// stay unique after the active controller is killed with SIGKILL and another one takes over.
// Also a single node, whose metadata actor is its controller: ids stay unique across a restart.

#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "runtime/client/cluster_client.hpp"
#include "runtime/client/producer.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/node_cluster.hpp"

using namespace capstan;
using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

const std::string binary = CAPSTAN_BINARY;

std::unique_ptr<client::cluster_client> connect_to(const node_process& n) {
  client::client_config cfg;
  cfg.bootstrap = {n.bootstrap()};
  cfg.request_timeout_ms = 60000;
  auto c = client::cluster_client::connect(cfg);
  if (!c) FAIL("cannot connect to node " << n.id() << ": " << c.err().to_string());
  return std::move(*c);
}

// A producer id through `client`; fails the test on an error.
int64_t producer_id(client::cluster_client& client) {
  auto id = client.init_producer_id();
  if (!id) FAIL("initProducerId failed: " << id.err().to_string());
  CHECK(id->producer_epoch == 0);
  CHECK(id->producer_id >= 0);
  return id->producer_id;
}

} // namespace

TEST_CASE("clients through different nodes get different producer ids, also after the active "
          "controller is killed",
          "[system][cluster][producer]") {
  node_cluster c(binary, 1);
  std::set<int64_t> seen;
  auto take = [&](client::cluster_client& client) {
    const auto id = producer_id(client);
    INFO("producer id " << id);
    CHECK(seen.insert(id).second);
    return id;
  };
  auto via_broker = connect_to(c.node(4));
  auto via_voter = connect_to(c.node(2));
  const auto a = take(*via_broker);
  const auto b = take(*via_voter);
  // Each node holds its own block of 1000.
  CHECK((a / 1000) != (b / 1000));
  CHECK(take(*via_broker) == a + 1);

  // The producer keeps what it got.
  client::producer p(*via_voter, via_voter->config());
  REQUIRE(p.init_producer_id());
  CHECK(seen.insert(p.identity().producer_id).second);
  CHECK(p.identity().producer_epoch == 0);

  int active = 0;
  REQUIRE(eventually([&] { return (active = c.active_controller()) != 0; }, 60s));
  c.node(active).kill();
  // A node that has ids left still hands them out; a fresh node (restarted) asks the new active
  // controller, which continues after every block the old one committed.
  const int other = active == 1 ? 3 : 1;
  c.node(other).stop();
  c.node(other).start();
  auto restarted = connect_to(c.node(other));
  const auto after = take(*restarted);
  // Nodes 2 and 4 got the first two blocks.
  CHECK(after >= 2000);
  take(*via_broker);
  for (int id = 1; id <= 4; ++id)
    if (c.node(id).running()) c.node(id).stop();
}

TEST_CASE("a single node hands out each producer id once, also after a restart",
          "[system][producer]") {
  temp_dir dir{"capstan-pid"};
  node_process n(dir, 1, node_process_options{binary, "", "127.0.0.1:0", {}});
  n.start();
  std::set<int64_t> seen;
  {
    auto client = connect_to(n);
    CHECK(producer_id(*client) == 0);
    CHECK(producer_id(*client) == 1);
  }
  n.stop();
  n.start();
  auto client = connect_to(n);
  CHECK(producer_id(*client) == 1000);
  n.stop();
}
