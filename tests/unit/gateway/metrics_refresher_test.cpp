// The gauges Kafka's standard alerts read, from what a node knows: UnderReplicatedPartitions from
// its leader replicas' own state, OfflinePartitionsCount and ActiveControllerCount from its
// controller.

#include "actors/gateway/metrics_refresher.hpp"

#include <string>

#include <catch2/catch.hpp>

#include "runtime/metrics/metrics_registry.hpp"

using namespace capstan;

namespace {

replica_status replica(bool leader, int32_t replicas, int32_t isr) {
  replica_status s;
  s.leader = leader;
  s.replicas = replicas;
  s.isr = isr;
  return s;
}

} // namespace

TEST_CASE("under-replicated partitions are the ones led here with an ISR below the replica set",
          "[gateway][metrics]") {
  CHECK(under_replicated_partitions({}) == 0);
  CHECK(under_replicated_partitions({
            replica(true, 3, 3),  // healthy
            replica(true, 3, 2),  // under-replicated, led here
            replica(false, 3, 0), // a follower: its leader counts it
            replica(true, 1, 1),  // a single replica is never under-replicated
            replica(true, 3, 1),
        }) == 2);
}

TEST_CASE("a single node's controller gauges count offline partitions and say it is active",
          "[gateway][metrics]") {
  cluster_metadata md;
  md.controller_id = 1;
  md.brokers = {broker_info{1, "h", 1}, broker_info{2, "h", 2}};
  topic_metadata t;
  t.name = "t";
  t.partitions = {
      partition_assignment{0, {1, 2}, 1, 0, {1, 2}, {}}, // healthy
      partition_assignment{1, {1, 2}, 1, 0, {1}, {}},    // under-replicated: still online
      partition_assignment{2, {1, 3}, 3, 0, {3}, {}},    // leader 3 is not registered: offline
      partition_assignment{3, {1}, -1, 0, {}, {}},       // no leader: offline
  };
  md.topics["t"] = t;
  const auto mine = controller_gauges_of(md, 1);
  CHECK(mine.active);
  CHECK(mine.offline_partitions == 2);
  CHECK_FALSE(controller_gauges_of(md, 2).active);

  metrics_registry r;
  set_controller_gauges(r, mine);
  auto text = r.render();
  CHECK(text.find("capstan_offline_partitions 2\n") != std::string::npos);
  CHECK(text.find("capstan_active_controller_count 1\n") != std::string::npos);
  // A node that is not the active controller reports neither (Kafka's alerts sum them).
  set_controller_gauges(r, controller_gauges{});
  text = r.render();
  CHECK(text.find("capstan_offline_partitions 0\n") != std::string::npos);
  CHECK(text.find("capstan_active_controller_count 0\n") != std::string::npos);
}
