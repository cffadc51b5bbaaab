#pragma once

// Where a new partition's replicas go: Kafka's AdminUtils.assignReplicasToBrokers, reproduced
// step for step so capstan places replicas as Kafka does.
//
// Rack-unaware (no broker has a rack; also when only some have one, where Kafka's strict mode
// refuses and its safe mode ignores racks: capstan ignores them): the leader of partition p is
// brokers[(p + start_index) % n]; follower j sits `1 + (shift + j) % (n - 1)` places after it,
// and the shift grows by one each time p passes a multiple of n, so the followers of a broker's
// partitions spread over the other brokers.
//
// Rack-aware (every broker has a rack): the same walk over a rack-alternated list (racks in name
// order, taking each rack's next broker by id in turn), with the shift scaled by the rack count,
// skipping a broker whose rack already holds a replica while some rack holds none, and a broker
// that holds one while some broker holds none.

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "runtime/types.hpp"

namespace capstan::controller {

struct placement_broker {
  node_id id;
  std::string rack; // empty: none

  bool operator==(const placement_broker&) const = default;
};

// Replicas of partitions first_partition .. first_partition + partitions - 1, in that order;
// each list's first entry is the preferred leader. `brokers` in the order Kafka walks them
// (callers pass them ascending by id, as Kafka's topic creation does).
// REQUIRES: 1 <= replication_factor <= brokers.size(), partitions >= 0, first_partition >= 0,
// 0 <= start_index, 0 <= replica_shift.
std::vector<std::vector<node_id>> assign_replicas(const std::vector<placement_broker>& brokers,
                                                  int32_t partitions, int32_t replication_factor,
                                                  int32_t start_index, int32_t replica_shift,
                                                  int32_t first_partition = 0);

// As Kafka's createTopics: start index and shift drawn from `rng`, first partition 0.
std::vector<std::vector<node_id>> assign_replicas(const std::vector<placement_broker>& brokers,
                                                  int32_t partitions, int32_t replication_factor,
                                                  std::mt19937_64& rng);

// Kafka's getRackAlternatedBrokerList. REQUIRES: every broker has a rack.
std::vector<node_id> rack_alternated(const std::vector<placement_broker>& brokers);

} // namespace capstan::controller
