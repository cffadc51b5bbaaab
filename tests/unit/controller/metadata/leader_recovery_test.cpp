// Last replica standing: a partition whose ISR members are all gone comes back on the most
// up-to-date of the replicas that returned, once enough of them did that one of them must hold
// every acknowledged record (actors/controller/metadata/leader_recovery.hpp).

#include <catch2/catch.hpp>

#include "actors/controller/metadata/broker_decisions.hpp"
#include "actors/controller/metadata/leader_recovery.hpp"
#include "actors/controller/metadata/partition_change.hpp"
#include "tests/unit/controller/metadata/image_builder.hpp"

using namespace capstan;
using namespace capstan::controller;
using namespace capstan::controller::test;

namespace {

const topic_id orders = make_topic_id(1);

metadata_image fenced(metadata_image image, int32_t node) {
  const auto* b = image.broker(node_id{node});
  REQUIRE(b != nullptr);
  auto d = fence_broker(image, node_id{node}, b->epoch, {});
  REQUIRE(d);
  return applied(image, d->records);
}

metadata_image reregistered(metadata_image image, int32_t node) {
  const auto epoch = next(image.max_broker_epoch());
  return applied(image, {registration(node, epoch, {}, 2), unfence_broker_record{node_id{node}, epoch}});
}

// Every node crashed: fenced in id order, so the ISR of orders-0 ([1,2,3], min.insync.replicas
// `min_isr`) ends as {3}, with no leader; then nodes 1 and 2 came back, node 3 did not.
metadata_image crashed_without_three(const std::string& min_isr = "2") {
  auto image = image_builder()
                 .nodes({1, 2, 3})
                 .topic("orders", 1, {ids({1, 2, 3})}, {{"min.insync.replicas", min_isr}})
                 .image();
  for (int n : {1, 2, 3}) image = fenced(image, n);
  const auto& p = image.topic(orders)->partitions[0];
  REQUIRE(p.leader == no_leader);
  REQUIRE(p.isr == ids({3}));
  return reregistered(reregistered(image, 1), 2);
}

void report(leaderless_reports& reports, const metadata_image& image, int32_t node,
            int32_t last_epoch, int64_t log_end) {
  const auto& p = image.topic(orders)->partitions[0];
  reports[{orders, 0}][node_id{node}] = replica_log_report{
    image.broker(node_id{node})->epoch,
    replica_log_info{orders, 0, last_epoch, log_end, p.leader_epoch.value()}};
}

} // namespace

TEST_CASE("a leaderless partition whose last ISR member never returns is led by the most "
          "up-to-date of enough returning replicas, alone in its ISR",
          "[controller][recovery]") {
  const auto image = crashed_without_three();
  decision_options options;
  leaderless_reports reports;
  // One replica back: with RF 3 and min.insync.replicas 2, two must be.
  report(reports, image, 1, 2, 500);
  CHECK(recoverable_partitions(image, reports, options).empty());
  CHECK(recover_leaderless(image, reports, options).records.empty());

  // Node 2's log is longer in the same last epoch: it holds what node 1 has.
  report(reports, image, 2, 2, 700);
  REQUIRE(recoverable_partitions(image, reports, options).size() == 1);
  auto d = recover_leaderless(image, reports, options);
  REQUIRE(d.records.size() == 1);
  CHECK_FALSE(d.warnings.empty());
  const auto after = applied(image, d.records);
  const auto& p = after.topic(orders)->partitions[0];
  CHECK(p.leader == node_id{2});
  CHECK(p.isr == ids({2}));
  CHECK(p.leader_epoch.value() == image.topic(orders)->partitions[0].leader_epoch.value() + 1);
  CHECK(recoverable_partitions(after, reports, options).empty());
}

TEST_CASE("a later last epoch wins over a longer log, and a shorter or empty log never leads over "
          "one that holds more",
          "[controller][recovery]") {
  const auto image = crashed_without_three();
  decision_options options;
  leaderless_reports reports;
  report(reports, image, 1, 3, 100);
  report(reports, image, 2, 2, 900);
  auto d = recover_leaderless(image, reports, options);
  REQUIRE(d.records.size() == 1);
  CHECK(applied(image, d.records).topic(orders)->partitions[0].leader == node_id{1});

  leaderless_reports empty_one;
  report(empty_one, image, 1, -1, 0);
  report(empty_one, image, 2, 2, 40);
  d = recover_leaderless(image, empty_one, options);
  REQUIRE(d.records.size() == 1);
  CHECK(applied(image, d.records).topic(orders)->partitions[0].leader == node_id{2});

  // Equal logs: replica order.
  leaderless_reports tie;
  report(tie, image, 2, 2, 40);
  report(tie, image, 1, 2, 40);
  d = recover_leaderless(image, tie, options);
  REQUIRE(d.records.size() == 1);
  CHECK(applied(image, d.records).topic(orders)->partitions[0].leader == node_id{1});
}

TEST_CASE("reports that no longer count are ignored: a fenced node's, an earlier registration's, "
          "one of another leader epoch",
          "[controller][recovery]") {
  const auto image = crashed_without_three();
  decision_options options;

  leaderless_reports stale_registration;
  report(stale_registration, image, 1, 2, 10);
  report(stale_registration, image, 2, 2, 10);
  stale_registration[{orders, 0}][node_id{2}].reported_by = broker_epoch{1};
  CHECK(recoverable_partitions(image, stale_registration, options).empty());

  leaderless_reports other_epoch;
  report(other_epoch, image, 1, 2, 10);
  report(other_epoch, image, 2, 2, 10);
  other_epoch[{orders, 0}][node_id{1}].log.leader_epoch -= 1;
  CHECK(recoverable_partitions(image, other_epoch, options).empty());

  leaderless_reports from_fenced;
  const auto two_fenced = fenced(image, 2);
  report(from_fenced, two_fenced, 1, 2, 10);
  report(from_fenced, two_fenced, 2, 2, 10);
  CHECK(recoverable_partitions(two_fenced, from_fenced, options).empty());
}

TEST_CASE("an ISR member whose registration the controller has not heard from since it became "
          "active does not hold the recovery back, one heard from does",
          "[controller][recovery]") {
  // Node 3's registration is unfenced again (its old process, presumed alive by a new active
  // controller), but nothing was heard from it.
  auto image = crashed_without_three();
  image = applied(image, {unfence_broker_record{node_id{3}, image.broker(node_id{3})->epoch}});
  decision_options options;
  leaderless_reports reports;
  report(reports, image, 1, 2, 10);
  report(reports, image, 2, 2, 20);
  CHECK(recoverable_partitions(image, reports, options).empty());
  const liveness heard_from_one_and_two = [](node_id n) { return n != node_id{3}; };
  REQUIRE(recoverable_partitions(image, reports, options, heard_from_one_and_two).size() == 1);
  auto d = recover_leaderless(image, reports, options, heard_from_one_and_two);
  REQUIRE(d.records.size() == 1);
  CHECK(applied(image, d.records).topic(orders)->partitions[0].leader == node_id{2});
}

TEST_CASE("with min.insync.replicas 1 every replica must be back, and a live ISR member or "
          "unclean leader election leaves the partition to the election rules",
          "[controller][recovery]") {
  decision_options options;
  {
    const auto image = crashed_without_three("1");
    leaderless_reports reports;
    report(reports, image, 1, 2, 10);
    report(reports, image, 2, 2, 10);
    CHECK(replicas_needed_for_recovery(*image.topic(orders), 3, 1) == 3);
    CHECK(recoverable_partitions(image, reports, options).empty());
  }
  {
    auto image = crashed_without_three();
    leaderless_reports reports;
    report(reports, image, 1, 2, 10);
    report(reports, image, 2, 2, 10);
    options.unclean_leader_election_enable = true;
    CHECK(recoverable_partitions(image, reports, options).empty());
  }
}

namespace {

// Node `node`'s next process registering: from its old data dir (`previous` its old incarnation,
// 1 in image_builder; `clean` whether that process stopped cleanly) or, with `previous` 0, from a
// new data dir.
broker_registration_request next_process(int32_t node, uint8_t incarnation, uint8_t previous,
                                         bool clean) {
  auto r = registration(node, broker_epoch{0}, {}, incarnation);
  broker_registration_request out{r.node,         r.incarnation,  r.cluster_id, r.client_host,
                                  r.client_port,  r.cluster_host, r.cluster_port, r.rack};
  out.kafka_host = r.kafka_host;
  out.kafka_port = r.kafka_port;
  if (previous != 0) out.previous_incarnation = make_incarnation(previous);
  out.previous_clean_shutdown = clean;
  return out;
}

// Every node crashed (orders-0's ISR ends as {3}, no leader); node 3's next process registers
// as `who` says and is unfenced by its first heartbeat.
metadata_image three_back_as(const broker_registration_request& who) {
  auto image = image_builder()
                 .nodes({1, 2, 3})
                 .topic("orders", 1, {ids({1, 2, 3})}, {{"min.insync.replicas", "2"}})
                 .image();
  for (int n : {1, 2, 3}) image = fenced(image, n);
  REQUIRE(image.topic(orders)->partitions[0].isr == ids({3}));
  auto reg = register_broker(image, who, false, {});
  REQUIRE(reg);
  image = applied(image, reg->records);
  const auto epoch = image.broker(node_id{3})->epoch;
  auto back = unfence_broker(image, node_id{3}, epoch, {});
  REQUIRE(back);
  return applied(image, back->records);
}

} // namespace

TEST_CASE("the last ISR member back after a crash or on a new data dir: it leaves the ISR, is "
          "never elected on its own say, and the partition comes back on the most up-to-date of "
          "enough replicas",
          "[controller][recovery]") {
  // A new machine under node 3's id, with an empty disk.
  const auto wiped = next_process(3, 9, 0, false);
  // Node 3's next process on its own data dir after a crash (its log may lack its tail).
  const auto crashed = next_process(3, 9, 1, false);
  for (const auto& who : {wiped, crashed}) {
    INFO("previous incarnation named: " << (who.previous_incarnation != incarnation_id{}));
    auto image = three_back_as(who);
    const auto& p = image.topic(orders)->partitions[0];
    CHECK(p.isr.empty());
    CHECK(p.leader == no_leader);

    // Nodes 1 and 2 come back with the records node 3 lacks; node 3 reports an empty log.
    image = reregistered(reregistered(image, 1), 2);
    leaderless_reports reports;
    report(reports, image, 3, -1, 0);
    CHECK(recover_leaderless(image, reports, {}).records.empty()); // one report of the 2 needed
    report(reports, image, 1, 2, 500);
    report(reports, image, 2, 2, 700);
    auto d = recover_leaderless(image, reports, {});
    REQUIRE(d.records.size() == 1);
    CHECK(applied(image, d.records).topic(orders)->partitions[0].leader == node_id{2});
  }
}

TEST_CASE("a replica back on a new data dir neither counts towards recovery nor leads it until it "
          "rejoins the ISR",
          "[controller][recovery]") {
  // Node 1 is down while nodes 2 and 3 acknowledge records; then they crash too (ISR {3}).
  auto image = image_builder()
                 .nodes({1, 2, 3})
                 .topic("orders", 1, {ids({1, 2, 3})}, {{"min.insync.replicas", "2"}})
                 .image();
  for (int n : {1, 2, 3}) image = fenced(image, n);
  // Node 1 comes back behind; node 3 comes back as a new machine with an empty disk.
  image = reregistered(image, 1);
  auto reg = register_broker(image, next_process(3, 9, 0, false), false, {});
  REQUIRE(reg);
  image = applied(image, reg->records);
  const auto epoch = image.broker(node_id{3})->epoch;
  auto back = unfence_broker(image, node_id{3}, epoch, {});
  REQUIRE(back);
  image = applied(image, back->records);
  CHECK(image.topic(orders)->partitions[0].isr.empty());
  CHECK(image.topic(orders)->partitions[0].wiped == ids({3}));

  // Two reports, but node 3's log lost what it acknowledged: node 1 must not lead without it.
  leaderless_reports reports;
  report(reports, image, 1, 1, 100);
  report(reports, image, 3, -1, 0);
  CHECK(recoverable_partitions(image, reports, {}).empty());

  // Node 2 holds the records.
  image = reregistered(image, 2);
  report(reports, image, 2, 2, 700);
  auto d = recover_leaderless(image, reports, {});
  REQUIRE(d.records.size() == 1);
  image = applied(image, d.records);
  const auto& p = image.topic(orders)->partitions[0];
  CHECK(p.leader == node_id{2});
  CHECK(p.wiped == ids({3}));

  // Caught up, node 3 enters the ISR and counts again.
  auto caught_up = make_partition_change(orders, partition_id{0}, p, p.leader, ids({2, 3}));
  REQUIRE(caught_up);
  image = applied(image, {*caught_up});
  CHECK(image.topic(orders)->partitions[0].wiped.empty());
}

TEST_CASE("a fenced node still in ISRs with other members leaves them when it comes back after a "
          "crash or on a new data dir, and the partitions it led move on",
          "[controller][recovery]") {
  const auto wiped = next_process(2, 9, 0, false);
  const auto crashed = next_process(2, 9, 1, false);
  for (const auto& who : {wiped, crashed}) {
    const bool new_dir = who.previous_incarnation == incarnation_id{};
    INFO("new data dir: " << new_dir);
    auto image = image_builder()
                   .nodes({1, 2, 3})
                   .topic("orders", 1, {ids({1, 2, 3}), ids({2, 1, 3})},
                          {{"min.insync.replicas", "2"}})
                   .image();
    // Node 2 stopped cleanly while no other member was heard from: fenced, but kept in both ISRs
    // and as orders-1's leader, for its next process to take up again.
    image = applied(image, {fence_broker_record{node_id{2}, image.broker(node_id{2})->epoch}});
    auto reg = register_broker(image, who, false, {});
    REQUIRE(reg);
    image = applied(image, reg->records);
    const auto& p0 = image.topic(orders)->partitions[0];
    const auto& p1 = image.topic(orders)->partitions[1];
    CHECK(p0.isr == ids({1, 3}));
    CHECK(p0.leader == node_id{1});
    CHECK(p1.isr == ids({1, 3}));
    CHECK(p1.leader == node_id{1});
    CHECK(p0.is_wiped(node_id{2}) == new_dir);
    CHECK(p1.is_wiped(node_id{2}) == new_dir);
  }
}

TEST_CASE("the last ISR member back from a clean shutdown keeps its place and leads again",
          "[controller][recovery]") {
  const auto image = three_back_as(next_process(3, 9, 1, true));
  const auto& p = image.topic(orders)->partitions[0];
  CHECK(p.isr == ids({3}));
  CHECK(p.leader == node_id{3});
}
