// Replica placement reproduces Kafka's AdminUtils.assignReplicasToBrokers. The expected
// placements below were worked out by hand from Kafka's algorithm (the formula in
// replica_placement.hpp); the first and the rack-aware one are also the examples in Kafka's own
// documentation of assignReplicasToBrokers.

#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <set>

#include "actors/controller/metadata/replica_placement.hpp"
#include "tests/unit/controller/metadata/image_builder.hpp"

using namespace capstan;
using namespace capstan::controller;
using namespace capstan::controller::test;

namespace {

std::vector<placement_broker> brokers(std::initializer_list<int32_t> nodes) {
  std::vector<placement_broker> out;
  for (auto n : nodes) out.push_back(placement_broker{node_id{n}, {}});
  return out;
}

std::vector<placement_broker> racked(std::initializer_list<std::pair<int32_t, const char*>> nodes) {
  std::vector<placement_broker> out;
  for (auto [n, rack] : nodes) out.push_back(placement_broker{node_id{n}, rack});
  return out;
}

using placement = std::vector<std::vector<node_id>>;

} // namespace

TEST_CASE("rack-unaware placement is Kafka's: leaders round-robin, followers shifted",
          "[controller][placement]") {
  // Kafka's documented example: 5 brokers, 10 partitions, 3 replicas, start 0, shift 0. Leaders
  // p -> p % 5; followers 1 and 2 places on; from p5 on the shift is 1, so followers sit 2 and 3
  // places on.
  const placement kafka_example = {ids({0, 1, 2}), ids({1, 2, 3}), ids({2, 3, 4}), ids({3, 4, 0}),
                                   ids({4, 0, 1}), ids({0, 2, 3}), ids({1, 3, 4}), ids({2, 4, 0}),
                                   ids({3, 0, 1}), ids({4, 1, 2})};
  CHECK(assign_replicas(brokers({0, 1, 2, 3, 4}), 10, 3, 0, 0) == kafka_example);

  // Node ids are not positions: nodes 1,2,3, start 2, shift 1. p0 leads at position 2 (node 3),
  // follower 1 + (1 + 0) % 2 = 2 places on (position 1, node 2); p3 passes a multiple of 3, so the
  // shift becomes 2 and the follower sits 1 place on.
  CHECK(assign_replicas(brokers({1, 2, 3}), 4, 2, 2, 1) ==
        placement{ids({3, 2}), ids({1, 3}), ids({2, 1}), ids({3, 1})});

  // Continuing from partition 2 (adding partitions): p2 keeps shift 1, p3 bumps it to 2.
  CHECK(assign_replicas(brokers({0, 1, 2}), 2, 2, 1, 1, 2) == placement{ids({0, 2}), ids({1, 2})});

  CHECK(assign_replicas(brokers({4}), 3, 1, 0, 0) == placement{ids({4}), ids({4}), ids({4})});
}

TEST_CASE("rack-unaware placement spreads leaders and replicas evenly", "[controller][placement]") {
  std::mt19937_64 rng(5);
  const auto nodes = brokers({1, 2, 3, 4});
  const auto p = assign_replicas(nodes, 12, 3, rng);
  std::map<node_id, int> leaders;
  std::map<node_id, int> replicas;
  for (const auto& r : p) {
    ++leaders[r.front()];
    CHECK(std::set<node_id>(r.begin(), r.end()).size() == 3);
    for (auto n : r) ++replicas[n];
  }
  for (const auto& b : nodes) {
    CHECK(leaders[b.id] == 3);
    CHECK(replicas[b.id] == 9);
  }
}

TEST_CASE("the random start and shift come from the generator passed in",
          "[controller][placement]") {
  const auto nodes = brokers({1, 2, 3, 4, 5});
  std::mt19937_64 a(11);
  std::mt19937_64 b(11);
  const auto start = static_cast<int32_t>(b() % 5);
  const auto shift = static_cast<int32_t>(b() % 5);
  CHECK(assign_replicas(nodes, 7, 3, a) == assign_replicas(nodes, 7, 3, start, shift));
  std::mt19937_64 c(11);
  CHECK(assign_replicas(nodes, 7, 3, c) == assign_replicas(nodes, 7, 3, start, shift));
}

TEST_CASE("rack-aware placement is Kafka's: a rack-alternated list, racks before repeats",
          "[controller][placement]") {
  // Kafka's documented example: 0 rack1, 1 rack3, 2 rack3, 3 rack2, 4 rack2, 5 rack1 alternate
  // as 0,3,1,5,4,2; 6 partitions of 3 replicas walk it round-robin, and partition 6 (shift 1,
  // times 3 racks) is 0,4,2 rather than repeating 0,3,1.
  const auto nodes = racked({{0, "rack1"}, {1, "rack3"}, {2, "rack3"}, {3, "rack2"},
                             {4, "rack2"}, {5, "rack1"}});
  CHECK(rack_alternated(nodes) == ids({0, 3, 1, 5, 4, 2}));
  CHECK(assign_replicas(nodes, 7, 3, 0, 0) ==
        placement{ids({0, 3, 1}), ids({3, 1, 5}), ids({1, 5, 4}), ids({5, 4, 2}), ids({4, 2, 0}),
                  ids({2, 0, 3}), ids({0, 4, 2})});

  // Uneven racks (a: 1,2,3; b: 4; c: 5) alternate as 1,4,5,2,3. From start 3 the leader is 2;
  // the walk skips 3 and 1 (rack a has a replica while b and c have none) and takes 4 and 5.
  const auto uneven = racked({{1, "a"}, {2, "a"}, {3, "a"}, {4, "b"}, {5, "c"}});
  CHECK(rack_alternated(uneven) == ids({1, 4, 5, 2, 3}));
  CHECK(assign_replicas(uneven, 1, 3, 3, 0) == placement{ids({2, 4, 5})});
}

TEST_CASE("rack-aware placement puts replicas on every rack it can", "[controller][placement]") {
  const auto two_racks = racked({{1, "a"}, {2, "a"}, {3, "b"}, {4, "b"}});
  const auto three_racks = racked({{1, "x"}, {2, "y"}, {3, "z"}, {4, "x"}, {5, "y"}, {6, "z"}});
  auto racks_of = [](const std::vector<placement_broker>& nodes,
                     const std::vector<node_id>& replicas) {
    std::set<std::string> racks;
    for (auto n : replicas)
      for (const auto& b : nodes)
        if (b.id == n) racks.insert(b.rack);
    return racks.size();
  };
  for (uint64_t seed = 0; seed < 20; ++seed) {
    std::mt19937_64 rng(seed);
    for (const auto& r : assign_replicas(two_racks, 16, 3, rng))
      CHECK(racks_of(two_racks, r) == 2); // 3 replicas, 2 racks: both used
    for (const auto& r : assign_replicas(three_racks, 16, 3, rng))
      CHECK(racks_of(three_racks, r) == 3); // one replica per rack
  }
}

TEST_CASE("racks are ignored unless every node has one", "[controller][placement]") {
  const auto mixed = racked({{1, "a"}, {2, ""}, {3, "b"}});
  CHECK(assign_replicas(mixed, 6, 2, 1, 2) == assign_replicas(brokers({1, 2, 3}), 6, 2, 1, 2));
}
