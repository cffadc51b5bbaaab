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

TEST_CASE("the active controller's gauges say it is active and count offline partitions",
          "[gateway][metrics]") {
  const controller_gauges mine{true, 2};
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
