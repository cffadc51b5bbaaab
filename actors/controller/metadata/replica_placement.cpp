#include "actors/controller/metadata/replica_placement.hpp"

#include <algorithm>
#include <cassert>
#include <map>
#include <set>

namespace capstan::controller {

namespace {

// Kafka's AdminUtils.replicaIndex.
size_t replica_index(size_t first, int64_t shift, int64_t j, size_t n) {
  const auto offset = 1 + static_cast<size_t>((shift + j) % static_cast<int64_t>(n - 1));
  return (first + offset) % n;
}

bool all_have_racks(const std::vector<placement_broker>& brokers) {
  return std::all_of(brokers.begin(), brokers.end(),
                     [](const placement_broker& b) { return !b.rack.empty(); });
}

} // namespace

std::vector<node_id> rack_alternated(const std::vector<placement_broker>& brokers) {
  std::map<std::string, std::vector<node_id>> by_rack;
  for (const auto& b : brokers) by_rack[b.rack].push_back(b.id);
  for (auto& [rack, ids] : by_rack) std::sort(ids.begin(), ids.end());
  std::vector<node_id> out;
  for (size_t round = 0; out.size() < brokers.size(); ++round)
    for (const auto& [rack, ids] : by_rack)
      if (round < ids.size()) out.push_back(ids[round]);
  return out;
}

std::vector<std::vector<node_id>> assign_replicas(const std::vector<placement_broker>& brokers,
                                                  int32_t partitions, int32_t replication_factor,
                                                  int32_t start_index, int32_t replica_shift,
                                                  int32_t first_partition) {
  assert(replication_factor >= 1 && static_cast<size_t>(replication_factor) <= brokers.size());
  const bool rack_aware = all_have_racks(brokers);
  std::vector<node_id> order;
  std::map<node_id, std::string> rack_of;
  for (const auto& b : brokers) rack_of[b.id] = b.rack;
  if (rack_aware) {
    order = rack_alternated(brokers);
  } else {
    for (const auto& b : brokers) order.push_back(b.id);
  }
  const size_t n = order.size();
  std::set<std::string> rack_names;
  for (const auto& b : brokers) rack_names.insert(b.rack);
  const auto racks = static_cast<int64_t>(rack_names.size());
  std::vector<std::vector<node_id>> out;
  out.reserve(static_cast<size_t>(partitions));
  int64_t shift = replica_shift;
  for (int64_t p = first_partition; p < int64_t{first_partition} + partitions; ++p) {
    if (p > 0 && p % static_cast<int64_t>(n) == 0) ++shift;
    const size_t first = static_cast<size_t>((p + start_index) % static_cast<int64_t>(n));
    std::vector<node_id> replicas{order[first]};
    if (!rack_aware) {
      for (int64_t j = 0; j < replication_factor - 1; ++j)
        replicas.push_back(order[replica_index(first, shift, j, n)]);
    } else {
      std::set<std::string> racks_used{rack_of[order[first]]};
      std::set<node_id> brokers_used{order[first]};
      int64_t k = 0;
      for (int64_t j = 0; j < replication_factor - 1; ++j) {
        for (;;) {
          const node_id candidate = order[replica_index(first, shift * racks, k, n)];
          ++k;
          const auto& rack = rack_of[candidate];
          const bool rack_ok =
            racks_used.count(rack) == 0 || static_cast<int64_t>(racks_used.size()) == racks;
          const bool broker_ok = brokers_used.count(candidate) == 0 || brokers_used.size() == n;
          if (rack_ok && broker_ok) {
            replicas.push_back(candidate);
            racks_used.insert(rack);
            brokers_used.insert(candidate);
            break;
          }
        }
      }
    }
    out.push_back(std::move(replicas));
  }
  return out;
}

std::vector<std::vector<node_id>> assign_replicas(const std::vector<placement_broker>& brokers,
                                                  int32_t partitions, int32_t replication_factor,
                                                  std::mt19937_64& rng) {
  const auto n = brokers.size();
  const auto start_index = static_cast<int32_t>(rng() % n);
  const auto replica_shift = static_cast<int32_t>(rng() % n);
  return assign_replicas(brokers, partitions, replication_factor, start_index, replica_shift);
}

} // namespace capstan::controller
