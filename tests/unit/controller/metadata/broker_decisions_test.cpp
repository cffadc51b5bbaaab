// Registration, fencing and unfencing: every refusal by name, and the ISR and leader changes a
// fenced or returning node brings, with their epochs.

#include <algorithm>

#include <catch2/catch.hpp>

#include "actors/controller/metadata/broker_decisions.hpp"
#include "tests/unit/controller/metadata/image_builder.hpp"

using namespace capstan;
using namespace capstan::controller;
using namespace capstan::controller::test;

namespace {

const decision_options defaults;

// Nodes 1-3 unfenced (epochs 1-3); orders-0 [1,2,3], orders-1 [2,3,1], orders-2 [3,1,2],
// orders-3 [1,2]; ISR = replicas, leader = first.
metadata_image cluster(std::map<std::string, std::string> configs = {}) {
  return image_builder()
    .nodes({1, 2, 3})
    .topic("orders", 1, {ids({1, 2, 3}), ids({2, 3, 1}), ids({3, 1, 2}), ids({1, 2})},
           std::move(configs))
    .image();
}

broker_registration_request request(int32_t node, uint8_t incarnation) {
  auto r = registration(node, broker_epoch{0}, {}, incarnation);
  broker_registration_request out{r.node,         r.incarnation,  r.cluster_id, r.client_host,
                                  r.client_port,  r.cluster_host, r.cluster_port, r.rack};
  out.kafka_host = r.kafka_host;
  out.kafka_port = r.kafka_port;
  return out;
}

const partition_state& partition(const metadata_image& image, int32_t p) {
  return *image.partition(make_topic_id(1), partition_id{p});
}

// Shrinks orders-`p`'s ISR to `isr` through a PartitionChange, as an AlterPartition would.
metadata_image with_isr(const metadata_image& image, int32_t p, std::vector<node_id> isr) {
  const auto& cur = partition(image, p);
  return applied(image, {partition_change_record{make_topic_id(1), partition_id{p}, std::nullopt,
                                                 std::move(isr), std::nullopt, cur.leader_epoch,
                                                 next(cur.partition_epoch), {}}});
}

} // namespace

TEST_CASE("a new node registers fenced with the next broker epoch", "[controller][brokers]") {
  const auto image = cluster();
  auto d = register_broker(image, request(4, 1), false, defaults);
  REQUIRE(d.ok());
  REQUIRE(d->records.size() == 1);
  const auto& r = std::get<register_broker_record>(d->records[0]);
  CHECK(r.node == node_id{4});
  CHECK(r.epoch == broker_epoch{4});
  CHECK(r.cluster_id == test_cluster_id);
  CHECK(r.client_host == "client4.example");
  CHECK(r.cluster_port == 9504);
  const auto after = applied(image, d->records);
  CHECK(after.broker(node_id{4})->fenced);
}

TEST_CASE("registrations are refused by name", "[controller][brokers]") {
  const auto image = cluster();
  auto foreign = request(4, 1);
  foreign.cluster_id = "cluster-b";
  CHECK(register_broker(image, foreign, false, defaults).code() == errc::inconsistent_cluster_id);

  // Node 1 runs with incarnation 1 and still heartbeats: another process with its id is refused.
  auto twin = register_broker(image, request(1, 2), true, defaults);
  CHECK(twin.code() == errc::duplicate_broker_registration);
  CHECK(twin.err().message.find("node 1") != std::string::npos);

  auto no_port = request(4, 1);
  no_port.cluster_port = 0;
  CHECK(register_broker(image, no_port, false, defaults).code() == errc::invalid_request);
  auto negative = request(4, 1);
  negative.node = node_id{-3};
  CHECK(register_broker(image, negative, false, defaults).code() == errc::invalid_request);
}

TEST_CASE("a restart whose old session expired replaces the registration, fencing it first",
          "[controller][brokers]") {
  const auto image = cluster();
  auto d = register_broker(image, request(1, 2), false, defaults);
  REQUIRE(d.ok());
  REQUIRE(d->records.size() >= 2);
  CHECK(std::holds_alternative<fence_broker_record>(d->records[d->records.size() - 2]));
  const auto& r = std::get<register_broker_record>(d->records.back());
  CHECK(r.epoch == broker_epoch{4});
  CHECK(r.incarnation == make_incarnation(2));
  const auto after = applied(image, d->records);
  CHECK(after.broker(node_id{1})->fenced);
  CHECK(after.broker(node_id{1})->epoch == broker_epoch{4});
  for (int32_t p = 0; p < 4; ++p) {
    INFO("orders-" << p);
    CHECK(partition(after, p).leader != node_id{1});
    CHECK_FALSE(partition(after, p).in_isr(node_id{1}));
  }

  // Once fenced, a new incarnation just registers.
  auto again = register_broker(after, request(1, 3), false, defaults);
  REQUIRE(again.ok());
  REQUIRE(again->records.size() == 1);
  CHECK(std::get<register_broker_record>(again->records[0]).epoch == broker_epoch{5});
  // The same incarnation re-registering is a retry, not a twin (KRaft).
  CHECK(register_broker(image, request(1, 1), true, defaults).ok());
}

TEST_CASE("fencing a node takes it out of every ISR and re-elects the leaders it held",
          "[controller][brokers]") {
  const auto image = cluster();
  auto d = fence_broker(image, node_id{1}, broker_epoch{1}, defaults);
  REQUIRE(d.ok());
  CHECK(d->warnings.empty());
  const auto t = make_topic_id(1);
  const std::vector<metadata_record> expected = {
    // orders-0 [1,2,3]: the preferred leader 1 is gone, 2 is the first live ISR member.
    partition_change_record{t, partition_id{0}, node_id{2}, ids({2, 3}), std::nullopt,
                            leader_epoch{1}, partition_epoch{1}, {}},
    // orders-1 and orders-2 keep their leaders: only the ISR shrinks, the leader epoch stays.
    partition_change_record{t, partition_id{1}, std::nullopt, ids({2, 3}), std::nullopt,
                            leader_epoch{0}, partition_epoch{1}, {}},
    partition_change_record{t, partition_id{2}, std::nullopt, ids({3, 2}), std::nullopt,
                            leader_epoch{0}, partition_epoch{1}, {}},
    partition_change_record{t, partition_id{3}, node_id{2}, ids({2}), std::nullopt,
                            leader_epoch{1}, partition_epoch{1}, {}},
    fence_broker_record{node_id{1}, broker_epoch{1}},
  };
  CHECK(d->records == expected);
  const auto after = applied(image, d->records);
  CHECK(after.broker(node_id{1})->fenced);
  CHECK(fence_broker(after, node_id{1}, broker_epoch{1}, defaults)->records.empty());
}

TEST_CASE("a node's offline replicas leave their ISR and leadership, the node stays unfenced",
          "[controller][brokers]") {
  const auto image = with_isr(cluster(), 3, ids({1})); // orders-3 [1,2], ISR [1]
  const auto t = make_topic_id(1);
  // orders-0 (led by 1), orders-1 (1 follows), orders-3 (1 is the last ISR member), a replica
  // named twice, and replicas of a deleted topic and a partition that is not there.
  const offline_replicas offline = {{t, 0}, {t, 1}, {t, 0}, {t, 3}, {make_topic_id(9), 0}, {t, 8}};
  auto d = take_replicas_offline(image, node_id{1}, broker_epoch{1}, offline, defaults);
  REQUIRE(d.ok());
  const std::vector<metadata_record> expected = {
      partition_change_record{t, partition_id{0}, node_id{2}, ids({2, 3}), std::nullopt,
                              leader_epoch{1}, partition_epoch{1}, {}},
      partition_change_record{t, partition_id{1}, std::nullopt, ids({2, 3}), std::nullopt,
                              leader_epoch{0}, partition_epoch{1}, {}},
      // The last ISR member stays, as when fenced: the partition has no leader.
      partition_change_record{t, partition_id{3}, no_leader, std::nullopt, std::nullopt,
                              leader_epoch{1}, partition_epoch{2}, {}},
  };
  CHECK(d->records == expected);
  REQUIRE(d->warnings.size() == 1);
  CHECK(d->warnings[0].find("orders-3 is offline") != std::string::npos);
  const auto after = applied(image, d->records);
  CHECK(after.is_unfenced(node_id{1}));
  CHECK(partition(after, 2).isr == ids({3, 1, 2}));
  // Reported again in the next heartbeat: nothing left to change.
  CHECK(take_replicas_offline(after, node_id{1}, broker_epoch{1}, offline, defaults)
            ->records.empty());
  CHECK(take_replicas_offline(image, node_id{1}, broker_epoch{7}, offline, defaults).code() ==
        errc::stale_broker_epoch);
}

TEST_CASE("fencing refuses a stale or unknown registration", "[controller][brokers]") {
  const auto image = cluster();
  CHECK(fence_broker(image, node_id{1}, broker_epoch{7}, defaults).code() ==
        errc::stale_broker_epoch);
  CHECK(fence_broker(image, node_id{9}, broker_epoch{1}, defaults).code() ==
        errc::stale_broker_epoch);
  CHECK(unfence_broker(image, node_id{2}, broker_epoch{1}, defaults).code() ==
        errc::stale_broker_epoch);
  CHECK(check_broker_epoch(image, node_id{3}, broker_epoch{3}).ok());
  CHECK(check_broker_epoch(image, node_id{3}, broker_epoch{2}).code() == errc::stale_broker_epoch);
}

// Node 3, the highest broker epoch (3), fenced.
metadata_image with_node_3_fenced() {
  const auto image = cluster();
  return applied(image, fence_broker(image, node_id{3}, broker_epoch{3}, defaults)->records);
}

TEST_CASE("unregistering a node is refused by name: unknown, unfenced, or fenced with a live "
          "session",
          "[controller][brokers][unregister]") {
  const auto image = cluster();
  CHECK(unregister_broker(image, node_id{9}, false).code() == errc::broker_id_not_registered);
  CHECK(unregister_broker(image, node_id{-1}, false).code() == errc::broker_id_not_registered);
  auto unfenced = unregister_broker(image, node_id{3}, false);
  CHECK(unfenced.code() == errc::invalid_request);
  CHECK(unfenced.err().message.find("unfenced") != std::string::npos);
  const auto fenced = with_node_3_fenced();
  CHECK(unregister_broker(fenced, node_id{3}, true).code() == errc::invalid_request);
  // The image refuses the record too while the node is unfenced, or for another registration.
  const unregister_broker_record current{node_id{3}, broker_epoch{3}};
  CHECK(metadata_image(image).apply(current).code() == errc::invalid_request);
  const unregister_broker_record older{node_id{3}, broker_epoch{2}};
  CHECK(metadata_image(fenced).apply(older).code() == errc::stale_broker_epoch);
}

TEST_CASE("unregistering a node that is still a partition's last in-sync replica is refused, "
          "naming the partition",
          "[controller][brokers][unregister]") {
  // orders-2 [3,1,2] with ISR [3]; node 3 fenced stays its last member, without a leader.
  auto image = with_isr(cluster(), 2, ids({3}));
  const auto epoch = image.broker(node_id{3})->epoch;
  image = applied(image, fence_broker(image, node_id{3}, epoch, defaults)->records);
  REQUIRE(partition(image, 2).isr == ids({3}));
  REQUIRE(partition(image, 2).leader == no_leader);
  auto refused = unregister_broker(image, node_id{3}, false);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.code() == errc::invalid_request);
  CHECK(refused.err().message.find("last in-sync replica of orders-2") != std::string::npos);
}

TEST_CASE("an unregistered node leaves the image, its replicas stay offline, and the same id "
          "registers again above every earlier broker epoch",
          "[controller][brokers][unregister]") {
  const auto fenced = with_node_3_fenced();
  auto d = unregister_broker(fenced, node_id{3}, false);
  REQUIRE(d.ok());
  const std::vector<metadata_record> expected = {
    unregister_broker_record{node_id{3}, broker_epoch{3}}};
  CHECK(d->records == expected);
  const auto after = applied(fenced, d->records);
  CHECK(after.broker(node_id{3}) == nullptr);
  CHECK(after.brokers().size() == 2);
  CHECK(after.max_broker_epoch() == broker_epoch{3});
  // orders-0 [1,2,3] keeps 3 as a replica (a reassignment moves it off), out of the ISR.
  CHECK(partition(after, 0).replicas == ids({1, 2, 3}));
  CHECK_FALSE(partition(after, 0).in_isr(node_id{3}));
  CHECK(unregister_broker(after, node_id{3}, false).code() == errc::broker_id_not_registered);

  auto again = register_broker(after, request(3, 2), false, defaults);
  REQUIRE(again.ok());
  REQUIRE(again->records.size() == 1);
  CHECK(std::get<register_broker_record>(again->records[0]).epoch == broker_epoch{4});
}

TEST_CASE("the last ISR member stays in the ISR, with it fenced the partition goes offline",
          "[controller][brokers]") {
  const auto image = with_isr(cluster(), 3, ids({1})); // orders-3 [1,2], ISR [1]
  auto d = fence_broker(image, node_id{1}, broker_epoch{1}, defaults);
  REQUIRE(d.ok());
  const auto after = applied(image, d->records);
  const auto& p = partition(after, 3);
  CHECK(p.leader == no_leader);
  CHECK(p.isr == ids({1}));
  CHECK(p.leader_epoch == leader_epoch{1});
  CHECK(p.partition_epoch == partition_epoch{2});
  REQUIRE(d->warnings.size() == 1);
  CHECK(d->warnings[0].find("orders-3 is offline") != std::string::npos);

  // Node 1 comes back: it is the ISR, so it leads again.
  auto back = unfence_broker(after, node_id{1}, broker_epoch{1}, defaults);
  REQUIRE(back.ok());
  CHECK(std::holds_alternative<unfence_broker_record>(back->records.front()));
  const auto healed = applied(after, back->records);
  CHECK(partition(healed, 3).leader == node_id{1});
  CHECK(partition(healed, 3).isr == ids({1}));
  CHECK(partition(healed, 3).leader_epoch == leader_epoch{2});
  CHECK(partition(healed, 3).partition_epoch == partition_epoch{3});
  CHECK(unfence_broker(healed, node_id{1}, broker_epoch{1}, defaults)->records.empty());
}

TEST_CASE("unclean leader election picks a live replica outside the ISR, loudly",
          "[controller][brokers]") {
  SECTION("by the topic's config") {
    const auto image = with_isr(cluster({{"unclean.leader.election.enable", "true"}}), 3, ids({1}));
    auto d = fence_broker(image, node_id{1}, broker_epoch{1}, defaults);
    REQUIRE(d.ok());
    const auto after = applied(image, d->records);
    CHECK(partition(after, 3).leader == node_id{2});
    CHECK(partition(after, 3).isr == ids({2}));
    REQUIRE(d->warnings.size() == 1);
    CHECK(d->warnings[0].find("unclean leader election for orders-3") != std::string::npos);
  }
  SECTION("by the broker default, unless the topic says false") {
    decision_options unclean;
    unclean.unclean_leader_election_enable = true;
    const auto image = with_isr(cluster(), 3, ids({1}));
    CHECK(partition(applied(image, fence_broker(image, node_id{1}, broker_epoch{1}, unclean)->records),
                    3)
            .leader == node_id{2});
    const auto off = with_isr(cluster({{"unclean.leader.election.enable", "false"}}), 3, ids({1}));
    CHECK(partition(applied(off, fence_broker(off, node_id{1}, broker_epoch{1}, unclean)->records),
                    3)
            .leader == no_leader);
  }
  SECTION("when an out-of-ISR replica returns to an offline partition") {
    // orders-3 [1,2] offline with ISR [1]; node 2 was fenced too and comes back.
    auto image = with_isr(cluster({{"unclean.leader.election.enable", "true"}}), 3, ids({1}));
    image = applied(image, fence_broker(image, node_id{2}, broker_epoch{2}, defaults)->records);
    // Fencing 1 now leaves no live replica of orders-3 at all.
    image = applied(image, fence_broker(image, node_id{1}, broker_epoch{1}, defaults)->records);
    REQUIRE(partition(image, 3).leader == no_leader);
    auto d = unfence_broker(image, node_id{2}, broker_epoch{2}, defaults);
    REQUIRE(d.ok());
    const auto after = applied(image, d->records);
    CHECK(partition(after, 3).leader == node_id{2});
    CHECK(partition(after, 3).isr == ids({2}));
    CHECK_FALSE(d->warnings.empty());
  }
}

namespace {

// Node `node`'s next process on the same data dir: a new incarnation naming the old one.
// The next process on `node`'s data dir, whose predecessor stopped cleanly or (`clean` false)
// crashed.
broker_registration_request successor(int32_t node, uint8_t incarnation, uint8_t previous,
                                      bool clean = true) {
  auto r = request(node, incarnation);
  r.previous_incarnation = make_incarnation(previous);
  r.previous_clean_shutdown = clean;
  return r;
}

heard_from heard_only(std::vector<node_id> nodes) {
  return [nodes](node_id n) { return std::find(nodes.begin(), nodes.end(), n) != nodes.end(); };
}

} // namespace

TEST_CASE("a node's next process on its data dir replaces the registration at once, while the "
          "old session lives",
          "[controller][brokers]") {
  const auto image = cluster(); // every node registered with incarnation 1
  auto d = register_broker(image, successor(1, 2, 1), true, defaults);
  REQUIRE(d.ok());
  CHECK(std::holds_alternative<fence_broker_record>(d->records[d->records.size() - 2]));
  const auto& r = std::get<register_broker_record>(d->records.back());
  CHECK(r.incarnation == make_incarnation(2));
  CHECK(r.epoch == broker_epoch{4});
  // Every other node heard from: it leaves its ISRs and leaderships as any fenced node.
  const auto after = applied(image, d->records);
  for (int32_t p = 0; p < 4; ++p) {
    INFO("orders-" << p);
    CHECK(partition(after, p).leader != node_id{1});
    CHECK_FALSE(partition(after, p).in_isr(node_id{1}));
  }

  // Naming another incarnation, or none, proves nothing: a second process with this id.
  CHECK(register_broker(image, successor(1, 2, 7), true, defaults).code() ==
        errc::duplicate_broker_registration);
  CHECK(register_broker(image, request(1, 2), true, defaults).code() ==
        errc::duplicate_broker_registration);
  auto zero = request(1, 2);
  zero.previous_incarnation = incarnation_id{};
  CHECK(register_broker(image, zero, true, defaults).code() ==
        errc::duplicate_broker_registration);
}

TEST_CASE("a data dir is new, or restored from a backup, when it names no incarnation or one "
          "other than the registered one",
          "[controller][brokers]") {
  // Node 1's second process (incarnation 2) is registered; it crashed.
  auto image = cluster();
  auto second = register_broker(image, successor(1, 2, 1), false, defaults);
  REQUIRE(second);
  CHECK_FALSE(std::get<register_broker_record>(second->records.back()).new_data_dir);
  image = applied(image, second->records);
  const auto new_data_dir = [&](const broker_registration_request& r) {
    auto d = register_broker(image, r, false, defaults);
    REQUIRE(d);
    return std::get<register_broker_record>(d->records.back()).new_data_dir;
  };
  CHECK_FALSE(new_data_dir(successor(1, 3, 2, false))); // its data dir kept incarnation 2
  CHECK_FALSE(new_data_dir(request(1, 2)));              // the same process, registering again
  // A data dir restored from a backup made while process 1 ran.
  CHECK(new_data_dir(successor(1, 3, 1, false)));
  auto empty = request(1, 3);
  empty.previous_incarnation = incarnation_id{};
  CHECK(new_data_dir(empty));
}

TEST_CASE("after a whole-cluster crash a returning node leaves the ISRs its log may not hold, but "
          "as a last member, and leadership goes to no registration that was not heard from",
          "[controller][brokers]") {
  auto image = cluster();
  std::vector<node_id> heard;
  // Node 1's next process after a crash: its log may lack what the page cache held, so it leaves
  // every ISR where another member is (as any fenced node), heard from or not.
  auto one = register_broker(image, successor(1, 2, 1, false), true, defaults, heard_only(heard));
  REQUIRE(one.ok());
  image = applied(image, one->records);
  for (int32_t p = 0; p < 4; ++p) {
    INFO("orders-" << p);
    CHECK_FALSE(partition(image, p).in_isr(node_id{1}));
    // Nobody heard from can lead what node 1 led.
    CHECK(partition(image, p).leader != node_id{1});
  }
  CHECK(partition(image, 0).leader == no_leader);
  heard.push_back(node_id{1});
  auto back = unfence_broker(image, node_id{1}, broker_epoch{4}, defaults, heard_only(heard));
  REQUIRE(back.ok());
  image = applied(image, back->records);
  // Back, but outside the ISRs: it leads nothing until it caught up and rejoined.
  CHECK(partition(image, 0).leader == no_leader);
}

TEST_CASE("after a whole-cluster restart the returning nodes that stopped cleanly keep their ISRs "
          "and leadership goes to no registration that was not heard from",
          "[controller][brokers]") {
  // Every node was unfenced when all died; the newly active controller has heard from none.
  auto image = cluster();
  std::vector<node_id> heard;

  // Node 1's next process: no other ISR member was heard from, so node 1 stays in every ISR and
  // the partition it led waits for it rather than going to 2 or 3, whose processes are gone.
  auto one = register_broker(image, successor(1, 2, 1), true, defaults, heard_only(heard));
  REQUIRE(one.ok());
  CHECK(one->warnings.empty());
  image = applied(image, one->records);
  for (int32_t p = 0; p < 4; ++p) {
    INFO("orders-" << p);
    CHECK(partition(image, p).in_isr(node_id{1}));
  }
  CHECK(partition(image, 0).leader == no_leader); // [1,2,3]: node 1 led it
  CHECK(partition(image, 1).leader == node_id{2}); // led by 2's old registration: untouched
  CHECK(partition(image, 3).leader == no_leader);  // [1,2]
  heard.push_back(node_id{1});

  // Its first ready heartbeat unfences it, and it leads what it led.
  auto back = unfence_broker(image, node_id{1}, broker_epoch{4}, defaults, heard_only(heard));
  REQUIRE(back.ok());
  image = applied(image, back->records);
  CHECK(partition(image, 0).leader == node_id{1});
  CHECK(partition(image, 0).isr == ids({1, 2, 3}));
  CHECK(partition(image, 3).leader == node_id{1});

  // Node 2's next process: node 1 is heard from, so node 2 leaves the ISRs and its leadership
  // moves to node 1, the live one, never to node 3's dead registration.
  auto two = register_broker(image, successor(2, 2, 1), true, defaults, heard_only(heard));
  REQUIRE(two.ok());
  image = applied(image, two->records);
  CHECK(partition(image, 1).leader == node_id{1}); // [2,3,1]
  CHECK(partition(image, 0).leader == node_id{1});
  CHECK(partition(image, 2).leader == node_id{3}); // 3's old registration leads it still
  for (int32_t p = 0; p < 4; ++p) {
    INFO("orders-" << p);
    CHECK_FALSE(partition(image, p).in_isr(node_id{2}));
    CHECK(partition(image, p).in_isr(node_id{1}));
  }
}

TEST_CASE("fencing elects only nodes heard from, and no unclean leader while an ISR member is "
          "unfenced",
          "[controller][brokers]") {
  decision_options unclean;
  unclean.unclean_leader_election_enable = true;
  const auto image = cluster();
  // orders-0 [1,2,3]: 2 was not heard from, 3 was.
  auto d = fence_broker(image, node_id{1}, broker_epoch{1}, unclean, heard_only(ids({3})));
  REQUIRE(d.ok());
  auto after = applied(image, d->records);
  CHECK(partition(after, 0).leader == node_id{3});
  CHECK(partition(after, 0).isr == ids({2, 3}));
  // orders-3 [1,2]: 2 unfenced but not heard from: no clean choice, and no unclean one either
  // while 2 may still be the clean choice.
  CHECK(partition(after, 3).leader == no_leader);
  CHECK(partition(after, 3).isr == ids({2}));

  // Once node 2 heartbeats it leads the partition that waited for it.
  CHECK(elect_leaderless(after, node_id{3}, broker_epoch{3}, unclean, heard_only(ids({3})))
            ->records.empty());
  auto e = elect_leaderless(after, node_id{2}, broker_epoch{2}, unclean, heard_only(ids({2, 3})));
  REQUIRE(e.ok());
  after = applied(after, e->records);
  CHECK(partition(after, 3).leader == node_id{2});
  CHECK(elect_leaderless(after, node_id{2}, broker_epoch{2}, unclean)->records.empty());
  CHECK(elect_leaderless(after, node_id{2}, broker_epoch{9}, unclean).code() ==
        errc::stale_broker_epoch);
}
