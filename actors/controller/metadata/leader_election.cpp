#include "actors/controller/metadata/leader_election.hpp"

#include <algorithm>
#include <cassert>

#include "actors/controller/metadata/partition_change.hpp"
#include "runtime/cluster/topic_validation.hpp"

namespace capstan::controller {

namespace {

bool contains(const std::vector<node_id>& nodes, node_id n) {
  return std::find(nodes.begin(), nodes.end(), n) != nodes.end();
}

} // namespace

election_result elect_leader(const std::vector<node_id>& replicas, const std::vector<node_id>& isr,
                             const liveness& live, bool unclean_allowed,
                             const std::vector<node_id>& wiped) {
  // Replica order starts with the preferred replica, so one walk covers both clean rules.
  for (auto r : replicas)
    if (contains(isr, r) && live(r)) return {r, false};
  if (!unclean_allowed) return {};
  // Unclean: whatever the replica lacks is lost; one on an empty disk lacks everything.
  for (auto r : replicas)
    if (live(r) && !contains(wiped, r)) return {r, true};
  for (auto r : replicas)
    if (live(r)) return {r, true};
  return {};
}

bool unclean_leader_election_enabled(const topic_image& topic, bool broker_default) {
  auto it = topic.configs.find(unclean_leader_election_key);
  if (it == topic.configs.end()) return broker_default;
  auto parsed = parse_boolean_config(it->first, it->second);
  return parsed ? *parsed : broker_default;
}

std::optional<partition_change_record> leadership_change(const topic_image& topic, partition_id p,
                                                         const liveness& live,
                                                         std::optional<node_id> leaving,
                                                         bool unclean_allowed,
                                                         std::vector<std::string>& warnings) {
  assert(p.value() >= 0 && static_cast<size_t>(p.value()) < topic.partitions.size());
  const auto& current = topic.partitions[static_cast<size_t>(p.value())];
  auto alive = [&](node_id n) { return n != leaving && live(n); };
  std::vector<node_id> isr = current.isr;
  if (leaving && isr.size() > 1) std::erase(isr, *leaving);
  node_id leader = current.leader;
  if (leader == no_leader || !alive(leader) || !contains(isr, leader)) {
    auto elected = elect_leader(current.replicas, isr, alive, unclean_allowed, current.wiped);
    leader = elected.leader;
    const auto name = topic.name + "-" + std::to_string(p.value());
    if (elected.unclean) {
      warnings.push_back("unclean leader election for " + name + ": node " +
                         std::to_string(leader.value()) + " leads but was not in the ISR " +
                         to_string(isr) + "; records only the ISR had are lost");
      isr = {leader};
    } else if (leader == no_leader && current.leader != no_leader) {
      warnings.push_back("partition " + name + " is offline: " +
                         (unclean_allowed ? "no replica is live"
                                          : "no replica in its ISR " + to_string(isr) +
                                              " is live and unclean leader election is disabled"));
    }
  }
  return make_partition_change(topic.id, p, current, leader, isr);
}

} // namespace capstan::controller
