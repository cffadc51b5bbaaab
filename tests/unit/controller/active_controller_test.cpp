// The active controller's logic without actors: requests decided against the committed image,
// answered from the image their records build, and the control messages each change sends.

#include <catch2/catch.hpp>

#include "actors/controller/active_controller.hpp"
#include "tests/unit/controller/metadata/image_builder.hpp"

using namespace capstan;
using namespace capstan::controller;
using namespace capstan::controller::test;

namespace {

constexpr int64_t session_ms = 9000;

active_controller make_controller() {
  active_controller_options o;
  o.node = node_id{1};
  o.session_timeout_ms = session_ms;
  o.seed = 7;
  o.decisions.default_replication_factor = 3;
  return active_controller(o);
}

// Decides, applies the records as the quorum would, and settles.
settled_request run(active_controller& c, controller_request request, int64_t now) {
  auto p = c.prepare(std::move(request), now);
  if (p.refused.code != errc::none || p.changes.records.empty())
    return c.commit(p, std::nullopt, {}, now);
  return c.commit(p, applied(c.image(), p.changes.records), {}, now);
}

broker_registration_request registration_of(int32_t node, uint8_t incarnation) {
  auto r = registration(node, broker_epoch{0}, {}, incarnation);
  broker_registration_request out{r.node,        r.incarnation,  r.cluster_id,   r.client_host,
                                  r.client_port, r.cluster_host, r.cluster_port, r.rack};
  out.kafka_host = r.kafka_host;
  out.kafka_port = r.kafka_port;
  return out;
}

std::vector<outgoing_message::kind> kinds_to(const std::vector<outgoing_message>& ms,
                                             int32_t node) {
  std::vector<outgoing_message::kind> out;
  for (const auto& m : ms)
    if (m.to == node_id{node}) out.push_back(m.what);
  return out;
}

leader_and_isr_msg leader_and_isr_to(const std::vector<outgoing_message>& ms, int32_t node) {
  for (const auto& m : ms)
    if (m.to == node_id{node} && m.what == outgoing_message::kind::leader_and_isr)
      return std::get<leader_and_isr_msg>(m.message);
  FAIL("no LeaderAndIsr to node " << node);
  return {};
}

using kind = outgoing_message::kind;

} // namespace

TEST_CASE("a registered node is unfenced by its first heartbeat that says it is ready",
          "[controller][active]") {
  auto c = make_controller();
  CHECK(c.activate(metadata_image(test_cluster_id), 4, 0).empty());

  auto reg = run(c, registration_of(2, 1), 10);
  auto& answer = std::get<broker_registration_response_msg>(reg.answer);
  REQUIRE(answer.error == errc::none);
  CHECK(answer.leader_hint == 1);
  CHECK(c.image().broker(node_id{2})->fenced);
  // The new node gets the cluster's state at once.
  CHECK(kinds_to(reg.messages, 2) == std::vector<kind>{kind::update_metadata});

  auto not_ready = run(c, broker_heartbeat_msg{node_id{2}, answer.broker_epoch, true, {}}, 20);
  CHECK(std::get<broker_heartbeat_response_msg>(not_ready.answer).is_fenced);

  auto ready = run(c, broker_heartbeat_msg{node_id{2}, answer.broker_epoch, false, {}}, 30);
  auto& hb = std::get<broker_heartbeat_response_msg>(ready.answer);
  CHECK(hb.error == errc::none);
  CHECK_FALSE(hb.is_fenced);
  CHECK(c.image().is_unfenced(node_id{2}));

  auto stale = run(c, broker_heartbeat_msg{node_id{2}, answer.broker_epoch + 5, false, {}}, 40);
  CHECK(std::get<broker_heartbeat_response_msg>(stale.answer).error == errc::stale_broker_epoch);
}

TEST_CASE("another incarnation of a node is refused while the first one's session lives",
          "[controller][active]") {
  auto c = make_controller();
  (void)c.activate(metadata_image(test_cluster_id), 1, 0);
  REQUIRE(
      std::get<broker_registration_response_msg>(run(c, registration_of(2, 1), 0).answer).error ==
      errc::none);

  auto dup = run(c, registration_of(2, 2), 100);
  CHECK(std::get<broker_registration_response_msg>(dup.answer).error ==
        errc::duplicate_broker_registration);
  CHECK(dup.messages.empty());

  // Once its session ran out, the new process takes the node id over.
  auto later = run(c, registration_of(2, 2), session_ms + 1);
  CHECK(std::get<broker_registration_response_msg>(later.answer).error == errc::none);
}

TEST_CASE("activation sends every node its state, stamped with the term", "[controller][active]") {
  auto c = make_controller();
  auto image = image_builder().nodes({1, 2, 3}).topic("orders", 1, {ids({1, 2, 3})}).image();
  auto ms = c.activate(image, 6, 0);
  for (int32_t n : {1, 2, 3}) {
    CHECK(kinds_to(ms, n) == std::vector<kind>{kind::update_metadata, kind::leader_and_isr});
    auto lai = leader_and_isr_to(ms, n);
    CHECK(lai.controller_id == 1);
    CHECK(lai.controller_epoch == 6);
    REQUIRE(lai.partitions.size() == 1);
    CHECK(lai.partitions[0].leader == node_id{1});
  }
}

TEST_CASE("a node's controlled shutdown moves its leaderships and frees its id at once",
          "[controller][active]") {
  auto c = make_controller();
  auto image = image_builder().nodes({1, 2, 3}).topic("orders", 1, {ids({2, 1, 3})}).image();
  (void)c.activate(image, 2, 0);
  const auto epoch = c.image().broker(node_id{2})->epoch.value();
  // A heartbeat of a node that is not stopping says nothing of shutting down.
  for (int32_t n : {1, 2, 3}) {
    auto plain = run(
        c, broker_heartbeat_msg{node_id{n}, c.image().broker(node_id{n})->epoch.value(), false, {}},
        100);
    CHECK_FALSE(std::get<broker_heartbeat_response_msg>(plain.answer).should_shut_down);
  }

  auto stopping = run(c, broker_heartbeat_msg{node_id{2}, epoch, false, {}, true}, 200);
  const auto& answer = std::get<broker_heartbeat_response_msg>(stopping.answer);
  CHECK(answer.error == errc::none);
  CHECK(answer.should_shut_down);
  CHECK(answer.is_fenced);
  CHECK_FALSE(c.image().is_unfenced(node_id{2}));
  for (int32_t n : {1, 3}) {
    auto lai = leader_and_isr_to(stopping.messages, n);
    REQUIRE(lai.partitions.size() == 1);
    CHECK(lai.partitions[0].leader == node_id{1});
    CHECK(lai.partitions[0].isr == ids({1, 3}));
  }
  // Its next process registers well within the old session's timeout.
  CHECK_FALSE(c.session_alive(node_id{2}, 300));
  auto again = run(c, registration_of(2, 9), 300);
  CHECK(std::get<broker_registration_response_msg>(again.answer).error == errc::none);
}

TEST_CASE("a newly active controller starts no session for a fenced node", "[controller][active]") {
  auto c = make_controller();
  (void)c.activate(image_builder().nodes({1, 2, 3}).image(), 2, 0);
  const auto epoch = c.image().broker(node_id{2})->epoch.value();
  (void)run(c, broker_heartbeat_msg{node_id{2}, epoch, false, {}, true}, 100);
  REQUIRE_FALSE(c.image().is_unfenced(node_id{2}));
  // The controller's node fails over: the next one activates over the same image.
  const auto image = c.image();
  c.deactivate();
  (void)c.activate(image, 3, 1000);
  CHECK(c.session_alive(node_id{3}, 1100));
  CHECK_FALSE(c.session_alive(node_id{2}, 1100));
  auto again = run(c, registration_of(2, 9), 1100);
  CHECK(std::get<broker_registration_response_msg>(again.answer).error == errc::none);
}

TEST_CASE("an expired session fences the node and its partitions get new leaders",
          "[controller][active]") {
  auto c = make_controller();
  auto image = image_builder().nodes({1, 2, 3}).topic("orders", 1, {ids({1, 2, 3})}).image();
  (void)c.activate(image, 2, 0);
  for (int32_t n : {2, 3}) {
    auto hb = run(
        c, broker_heartbeat_msg{node_id{n}, c.image().broker(node_id{n})->epoch.value(), false, {}},
        5000);
    REQUIRE(std::get<broker_heartbeat_response_msg>(hb.answer).error == errc::none);
  }
  CHECK(c.expired_sessions(session_ms - 1).empty());
  auto expired = c.expired_sessions(session_ms + 1);
  REQUIRE(expired.size() == 1);
  CHECK(expired[0].node == node_id{1});
  // Reported once.
  CHECK(c.expired_sessions(session_ms + 2).empty());

  auto fenced = run(c, expired[0], session_ms + 2);
  CHECK(std::holds_alternative<std::monostate>(fenced.answer));
  CHECK_FALSE(c.image().is_unfenced(node_id{1}));
  for (int32_t n : {2, 3}) {
    auto lai = leader_and_isr_to(fenced.messages, n);
    REQUIRE(lai.partitions.size() == 1);
    CHECK(lai.partitions[0].leader == node_id{2});
    CHECK(lai.partitions[0].epoch == leader_epoch{1});
    CHECK(lai.partitions[0].isr == ids({2, 3}));
  }
}

TEST_CASE("a node whose connection closed is fenced at once, a heartbeat it sent before is no "
          "sign of life, and one on a new connection unfences it",
          "[controller][active]") {
  auto c = make_controller();
  auto image = image_builder().nodes({1, 2, 3}).topic("orders", 1, {ids({1, 2, 3})}).image();
  (void)c.activate(image, 2, 0);
  const auto epoch_of = [&](int32_t n) { return c.image().broker(node_id{n})->epoch.value(); };
  const broker_heartbeat_msg last_word{node_id{1}, epoch_of(1), false, {}};
  c.heartbeat_arrived(last_word, 100);

  c.connection_lost(node_id{1});
  CHECK_FALSE(c.session_alive(node_id{1}, 101));
  auto expired = c.expired_sessions(101);
  REQUIRE(expired.size() == 1);
  CHECK(expired[0].node == node_id{1});
  auto fenced = run(c, expired[0], 102);
  CHECK_FALSE(c.image().is_unfenced(node_id{1}));
  CHECK(leader_and_isr_to(fenced.messages, 2).partitions[0].isr == ids({2, 3}));

  // The heartbeat that arrived before the loss, decided after the fencing: it neither renews the
  // session nor unfences the node.
  auto stale = run(c, last_word, 103);
  CHECK(std::get<broker_heartbeat_response_msg>(stale.answer).is_fenced);
  CHECK_FALSE(c.image().is_unfenced(node_id{1}));
  CHECK_FALSE(c.session_alive(node_id{1}, 103));

  // The node was alive after all: its next heartbeat comes on a new connection.
  const broker_heartbeat_msg again{node_id{1}, epoch_of(1), false, {}};
  c.heartbeat_arrived(again, 2000);
  auto back = run(c, again, 2000);
  CHECK_FALSE(std::get<broker_heartbeat_response_msg>(back.answer).is_fenced);
  CHECK(c.image().is_unfenced(node_id{1}));
  CHECK(c.session_alive(node_id{1}, 2001));
}

TEST_CASE("a created topic reaches every replica after its configs, and a deleted one is stopped",
          "[controller][active]") {
  auto c = make_controller();
  (void)c.activate(image_builder().nodes({1, 2, 3}).image(), 3, 0);
  auto created = run(c, topic_spec{"orders", 2, 3, {{"min.insync.replicas", "2"}}}, 10);
  auto& answer = std::get<topic_response_msg>(created.answer);
  REQUIRE(answer.error == errc::none);
  auto t = c.image().topic_by_name("orders");
  REQUIRE(t != nullptr);
  CHECK(answer.id == t->id);
  for (int32_t n : {1, 2, 3}) {
    CHECK(kinds_to(created.messages, n) ==
          std::vector<kind>{kind::update_metadata, kind::leader_and_isr});
    auto lai = leader_and_isr_to(created.messages, n);
    REQUIRE(lai.partitions.size() == 2);
    for (const auto& p : lai.partitions) CHECK(p.leader == t->partitions[p.tp.second].leader);
  }

  auto again = run(c, topic_spec{"orders", 1, 1, {}}, 20);
  CHECK(std::get<topic_response_msg>(again.answer).error == errc::topic_already_exists);

  auto deleted = run(c, delete_topic_msg{"orders"}, 30);
  CHECK(std::get<topic_response_msg>(deleted.answer).id == answer.id);
  for (int32_t n : {1, 2, 3})
    CHECK(kinds_to(deleted.messages, n) ==
          std::vector<kind>{kind::update_metadata, kind::stop_replica});
}

TEST_CASE("an AlterConfigs sets the topic's overrides and every node hears of it",
          "[controller][active]") {
  auto c = make_controller();
  (void)c.activate(image_builder().nodes({1, 2, 3}).image(), 3, 0);
  auto created = run(c, topic_spec{"orders", 1, 3, {{"min.insync.replicas", "2"}}}, 10);
  REQUIRE(std::get<topic_response_msg>(created.answer).error == errc::none);
  auto altered = run(c, alter_configs_msg{"orders", {{"retention.ms", "60000"}}}, 20);
  auto& answer = std::get<topic_response_msg>(altered.answer);
  REQUIRE(answer.error == errc::none);
  auto t = c.image().topic_by_name("orders");
  REQUIRE(t != nullptr);
  CHECK(answer.id == t->id);
  CHECK(t->configs == std::map<std::string, std::string>{{"min.insync.replicas", "2"},
                                                         {"retention.ms", "60000"}});
  for (int32_t n : {1, 2, 3})
    CHECK(kinds_to(altered.messages, n) == std::vector<kind>{kind::update_metadata});

  auto unknown = run(c, alter_configs_msg{"missing", {{"retention.ms", "1"}}}, 30);
  CHECK(std::get<topic_response_msg>(unknown.answer).error == errc::unknown_topic_or_partition);
  auto refused =
      active_controller::refuse(alter_configs_msg{}, make_error(errc::not_controller, "no"), 2);
  CHECK(std::get<topic_response_msg>(refused).leader_hint == 2);
}

TEST_CASE("a voter describes its member and, only while active, the registered nodes' fencing",
          "[controller][active]") {
  auto c = make_controller();
  quorum_status s;
  s.node = node_id{1};
  s.role = raft::role::follower;
  s.term = raft::raft_term{2};
  s.commit_index = raft::log_index{5};
  s.leader = node_id{3};
  auto passive = describe_voter(s, c);
  CHECK(passive.node == 1);
  CHECK(passive.role == "follower");
  CHECK(passive.term == 2);
  CHECK(passive.commit_index == 5);
  CHECK(passive.leader == 3);
  CHECK_FALSE(passive.active);
  CHECK(passive.nodes.empty());

  (void)c.activate(image_builder().nodes({1, 2}).image(), 3, 0);
  s.role = raft::role::leader;
  auto active = describe_voter(s, c);
  CHECK(active.active);
  REQUIRE(active.nodes.size() == 2);
  CHECK(active.nodes[0].node == 1);
  CHECK(active.nodes[0].fenced == c.image().broker(node_id{1})->fenced);
}

TEST_CASE("a refusal keeps the request's shape and names the leader", "[controller][active]") {
  auto why = make_error(errc::not_controller, "not active");
  auto hb = active_controller::refuse(broker_heartbeat_msg{}, why, 3);
  CHECK(std::get<broker_heartbeat_response_msg>(hb).error == errc::not_controller);
  CHECK(std::get<broker_heartbeat_response_msg>(hb).leader_hint == 3);
  auto t = active_controller::refuse(topic_spec{}, why, -1);
  CHECK(std::get<topic_response_msg>(t).leader_hint == -1);
}

TEST_CASE("a leader's AlterPartition is answered from the committed image and the new ISR reaches "
          "the replicas",
          "[controller][active]") {
  auto c = make_controller();
  (void)c.activate(image_builder().nodes({1, 2, 3}).topic("orders", 1, {ids({1, 2, 3})}).image(), 2,
                   0);
  alter_partition_msg shrink;
  shrink.broker = node_id{1};
  shrink.partitions.push_back(
      alter_partition_item{{"orders", 0}, make_topic_id(1), leader_epoch{0}, 0, ids({1, 2})});
  auto settled = run(c, shrink, 10);
  auto& answer = std::get<alter_partition_response_msg>(settled.answer);
  REQUIRE(answer.error == errc::none);
  REQUIRE(answer.partitions.size() == 1);
  CHECK(answer.partitions[0].error == errc::none);
  CHECK(answer.partitions[0].isr == ids({1, 2}));
  CHECK(answer.partitions[0].partition_epoch == 1);
  for (int32_t n : {1, 2, 3}) {
    auto lai = leader_and_isr_to(settled.messages, n);
    REQUIRE(lai.partitions.size() == 1);
    CHECK(lai.partitions[0].isr == ids({1, 2}));
  }

  // The same request again builds on a partition epoch that is gone.
  auto stale = run(c, shrink, 20);
  CHECK(std::get<alter_partition_response_msg>(stale.answer).partitions[0].error ==
        errc::invalid_update_version);
}

TEST_CASE("a heartbeat renews its session when it arrives, before it is decided",
          "[controller][active]") {
  auto c = make_controller();
  (void)c.activate(image_builder().nodes({1, 2}).image(), 2, 0);
  c.heartbeat_arrived(
      broker_heartbeat_msg{node_id{2}, c.image().broker(node_id{2})->epoch.value(), false, {}},
      5000);
  // A heartbeat of another registration renews nothing.
  c.heartbeat_arrived(broker_heartbeat_msg{node_id{1}, 99, false, {}}, 5000);
  auto expired = c.expired_sessions(session_ms + 1);
  REQUIRE(expired.size() == 1);
  CHECK(expired[0].node == node_id{1});
}

TEST_CASE("AllocateProducerIds hands out consecutive blocks, also after a failover",
          "[controller][active][producer]") {
  auto c = make_controller();
  (void)c.activate(image_builder().nodes({1, 2}).image(), 3, 0);
  auto first = run(c, allocate_producer_ids_msg{node_id{2}}, 10);
  auto& a = std::get<allocate_producer_ids_response_msg>(first.answer);
  REQUIRE(a.error == errc::none);
  CHECK(a.first_id == 0);
  CHECK(a.size == 1000);
  // Nobody else needs to hear of a block.
  CHECK(first.messages.empty());
  auto second = run(c, allocate_producer_ids_msg{node_id{1}}, 20);
  CHECK(std::get<allocate_producer_ids_response_msg>(second.answer).first_id == 1000);

  // Another voter becomes active over the committed image and continues after the last block.
  auto next = make_controller();
  (void)next.activate(c.image(), 4, 30);
  auto third = run(next, allocate_producer_ids_msg{node_id{2}}, 40);
  CHECK(std::get<allocate_producer_ids_response_msg>(third.answer).first_id == 2000);

  auto refused = active_controller::refuse(allocate_producer_ids_msg{node_id{2}},
                                           make_error(errc::not_controller, "no"), 2);
  auto& r = std::get<allocate_producer_ids_response_msg>(refused);
  CHECK(r.leader_hint == 2);
  CHECK(r.size == 0);
}

TEST_CASE("CreatePartitions sends the new partitions to their replicas and everyone's metadata",
          "[controller][active]") {
  auto c = make_controller();
  (void)c.activate(image_builder().nodes({1, 2, 3}).image(), 3, 0);
  REQUIRE(std::get<topic_response_msg>(run(c, topic_spec{"orders", 1, 2, {}}, 10).answer).error ==
          errc::none);
  auto grown = run(c, create_partitions_msg{"orders", 3}, 20);
  REQUIRE(std::get<topic_response_msg>(grown.answer).error == errc::none);
  auto t = c.image().topic_by_name("orders");
  REQUIRE(t != nullptr);
  REQUIRE(t->partitions.size() == 3);
  for (int32_t n : {1, 2, 3}) {
    auto k = kinds_to(grown.messages, n);
    REQUIRE_FALSE(k.empty());
    CHECK(k.front() == kind::update_metadata);
  }
  // Each new partition's replicas hear of it, the old partition is not sent again.
  for (int32_t p : {1, 2})
    for (auto r : t->partitions[static_cast<size_t>(p)].replicas) {
      auto lai = leader_and_isr_to(grown.messages, r.value());
      bool found = false;
      for (const auto& x : lai.partitions) {
        CHECK(x.tp.second != 0);
        found = found || x.tp.second == p;
      }
      CHECK(found);
    }

  auto shrink = run(c, create_partitions_msg{"orders", 2}, 30);
  CHECK(std::get<topic_response_msg>(shrink.answer).error == errc::invalid_partitions);
  auto unknown = run(c, create_partitions_msg{"missing", 2}, 40);
  CHECK(std::get<topic_response_msg>(unknown.answer).error == errc::unknown_topic_or_partition);
}

TEST_CASE("ElectLeaders answers per partition and the periodic rebalance elects the same way",
          "[controller][active]") {
  auto c = make_controller();
  auto image = image_builder().nodes({1, 2, 3}).topic("orders", 1, {ids({1, 2, 3})}).image();
  // Node 2 leads orders-0 although node 1, its preferred replica, is live and in the ISR.
  image = applied(image, {partition_change_record{make_topic_id(1),
                                                  partition_id{0},
                                                  node_id{2},
                                                  std::nullopt,
                                                  std::nullopt,
                                                  leader_epoch{1},
                                                  partition_epoch{1},
                                                  {}}});
  (void)c.activate(image, 3, 0);

  auto refused =
      active_controller::refuse(elect_leaders_msg{}, make_error(errc::not_controller, "no"), 2);
  CHECK(std::get<elect_leaders_response_msg>(refused).leader_hint == 2);

  auto rebalanced = run(c, leader_rebalance{}, 10);
  CHECK(std::holds_alternative<std::monostate>(rebalanced.answer));
  CHECK(c.image().partition(make_topic_id(1), partition_id{0})->leader == node_id{1});
  CHECK(leader_and_isr_to(rebalanced.messages, 1).partitions.at(0).leader == node_id{1});

  auto asked = run(c, elect_leaders_msg{{{"orders", 0}, {"orders", 7}}}, 20);
  auto& answer = std::get<elect_leaders_response_msg>(asked.answer);
  REQUIRE(answer.error == errc::none);
  REQUIRE(answer.results.size() == 2);
  CHECK(answer.results[0].error == errc::election_not_needed);
  CHECK(answer.results[1].error == errc::unknown_topic_or_partition);
  CHECK(asked.messages.empty());

  auto all = run(c, elect_leaders_msg{}, 30);
  CHECK(std::get<elect_leaders_response_msg>(all.answer).results.size() == 1);
}

namespace {

// A heartbeat of `node`'s current registration that says it is ready.
broker_heartbeat_msg ready(const active_controller& c, int32_t node) {
  return broker_heartbeat_msg{
      node_id{node}, c.image().broker(node_id{node})->epoch.value(), false, {}};
}

const partition_state& orders(const active_controller& c, int32_t p) {
  return *c.image().partition(make_topic_id(1), partition_id{p});
}

} // namespace

TEST_CASE("after a whole-cluster restart of nodes that stopped cleanly every node's next process "
          "registers at once and every partition ends led by a returned node with its ISR whole "
          "again",
          "[controller][active]") {
  auto c = make_controller();
  // All three processes died unfenced; the quorum's new leader activates over their image.
  auto image = image_builder()
                   .nodes({1, 2, 3})
                   .topic("orders", 1, {ids({1, 2, 3}), ids({2, 3, 1}), ids({3, 1, 2})})
                   .image();
  (void)c.activate(image, 5, 0);
  int64_t now = 100;
  for (int32_t n : {1, 2, 3}) {
    INFO("node " << n);
    REQUIRE(c.session_alive(node_id{n}, now));
    auto next = registration_of(n, 2);
    next.previous_incarnation = make_incarnation(1);
    next.previous_clean_shutdown = true;
    auto reg = run(c, next, now);
    REQUIRE(std::get<broker_registration_response_msg>(reg.answer).error == errc::none);
    auto hb = run(c, ready(c, n), now + 1);
    REQUIRE_FALSE(std::get<broker_heartbeat_response_msg>(hb.answer).is_fenced);
    // Leadership moved only to nodes that came back: a partition led by an old registration is
    // one that node led before the restart.
    for (int32_t p = 0; p < 3; ++p) {
      INFO("orders-" << p);
      const auto leader = orders(c, p).leader;
      if (leader == no_leader) continue;
      CHECK(c.image().broker(leader)->incarnation == make_incarnation(leader.value() <= n ? 2 : 1));
    }
    now += 100;
  }
  for (int32_t p = 0; p < 3; ++p) {
    INFO("orders-" << p);
    CHECK(orders(c, p).leader != no_leader);
    // Node 1 came first and never left an ISR; the others rejoin once caught up (AlterPartition).
    CHECK(orders(c, p).in_isr(node_id{1}));
  }
  // Nothing was waited out.
  CHECK(c.expired_sessions(now).empty());
}

TEST_CASE("right after activation a moved leadership waits for a node heard from, and its first "
          "heartbeat elects it",
          "[controller][active]") {
  auto c = make_controller();
  auto image = image_builder().nodes({1, 2, 3}).topic("orders", 1, {ids({2, 1})}).image();
  (void)c.activate(image, 2, 0);
  // Node 2 stops before node 1 was heard from: node 1 may be alive, or a process that died.
  auto stopping = run(c,
                      broker_heartbeat_msg{
                          node_id{2}, c.image().broker(node_id{2})->epoch.value(), false, {}, true},
                      100);
  CHECK(std::get<broker_heartbeat_response_msg>(stopping.answer).should_shut_down);
  CHECK(orders(c, 0).leader == no_leader);
  CHECK(orders(c, 0).isr == ids({1}));
  auto heard = run(c, ready(c, 1), 200);
  CHECK(orders(c, 0).leader == node_id{1});
  auto lai = leader_and_isr_to(heard.messages, 1);
  REQUIRE(lai.partitions.size() == 1);
  CHECK(lai.partitions[0].leader == node_id{1});
  // Later heartbeats change nothing.
  CHECK(run(c, ready(c, 1), 300).messages.empty());
}

TEST_CASE("an UnregisterBroker removes a fenced node whose session ran out, and nothing else",
          "[controller][active][unregister]") {
  auto c = make_controller();
  (void)c.activate(image_builder().nodes({1, 2, 3}).image(), 3, 0);
  auto answer_of = [](const settled_request& s) { return std::get<topic_response_msg>(s.answer); };

  // Node 3 runs: unfenced, and its session is alive.
  CHECK(answer_of(run(c, unregister_broker_msg{node_id{3}}, 10)).error == errc::invalid_request);
  CHECK(answer_of(run(c, unregister_broker_msg{node_id{9}}, 10)).error ==
        errc::broker_id_not_registered);

  // A node that registered and heartbeats is fenced until ready, but alive.
  auto reg = run(c, registration_of(4, 1), 20);
  REQUIRE(std::get<broker_registration_response_msg>(reg.answer).error == errc::none);
  CHECK(answer_of(run(c, unregister_broker_msg{node_id{4}}, 30)).error == errc::invalid_request);

  // Node 3 stops: its session runs out and it is fenced; nodes 1 and 2 heartbeat on.
  for (int32_t n : {1, 2}) {
    const auto epoch = c.image().broker(node_id{n})->epoch.value();
    (void)run(c, broker_heartbeat_msg{node_id{n}, epoch, false, {}}, session_ms);
  }
  for (const auto& e : c.expired_sessions(session_ms + 100)) (void)run(c, e, session_ms + 100);
  REQUIRE(c.image().broker(node_id{3}) != nullptr);
  REQUIRE(c.image().broker(node_id{3})->fenced);
  auto unregistered = run(c, unregister_broker_msg{node_id{3}}, session_ms + 200);
  CHECK(answer_of(unregistered).error == errc::none);
  CHECK(c.image().broker(node_id{3}) == nullptr);
  // The others hear of it; node 3 hears nothing more.
  CHECK(kinds_to(unregistered.messages, 3).empty());
  for (int32_t n : {1, 2})
    CHECK(kinds_to(unregistered.messages, n) == std::vector<kind>{kind::update_metadata});
  CHECK(answer_of(run(c, unregister_broker_msg{node_id{3}}, session_ms + 300)).error ==
        errc::broker_id_not_registered);
}
