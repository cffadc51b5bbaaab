#include "runtime/client/assignors.hpp"

#include <algorithm>
#include <array>
#include <set>
#include <utility>

namespace capstan::client {

namespace {

using partition = std::pair<std::string, int32_t>;

// Static members first, by instance id, then the others by member id (Kafka's MemberInfo
// order), so that a static member's restart under a new member id lands in the same place.
std::vector<const assignor_member*> sorted(const std::vector<assignor_member>& members) {
  std::vector<const assignor_member*> out;
  for (const auto& m : members) out.push_back(&m);
  std::sort(out.begin(), out.end(), [](const assignor_member* a, const assignor_member* b) {
    const bool sa = !a->group_instance_id.empty(), sb = !b->group_instance_id.empty();
    if (sa != sb) return sa;
    if (sa && a->group_instance_id != b->group_instance_id)
      return a->group_instance_id < b->group_instance_id;
    return a->member_id < b->member_id;
  });
  return out;
}

bool subscribes(const assignor_member& m, const std::string& topic) {
  const auto& t = m.subscription.topics;
  return std::find(t.begin(), t.end(), topic) != t.end();
}

// Every member, with nothing yet.
group_assignment empty_assignment(const std::vector<assignor_member>& members) {
  group_assignment out;
  for (const auto& m : members) out[m.member_id];
  return out;
}

// The partitions of the topics some member subscribes to, sorted.
std::vector<partition> subscribed_partitions(const std::vector<assignor_member>& members,
                                             const partition_counts& counts) {
  std::set<std::string> topics;
  for (const auto& m : members) topics.insert(m.subscription.topics.begin(), m.subscription.topics.end());
  std::vector<partition> out;
  for (const auto& t : topics)
    if (auto it = counts.find(t); it != counts.end())
      for (int32_t p = 0; p < it->second; ++p) out.emplace_back(t, p);
  return out;
}

void sort_lists(group_assignment& a) {
  for (auto& [member, tps] : a)
    for (auto& [topic, partitions] : tps) std::sort(partitions.begin(), partitions.end());
}

constexpr std::array<assignor, 3> assignors{{
    {"range", rebalance_protocol::eager, &assign_range},
    {"roundrobin", rebalance_protocol::eager, &assign_roundrobin},
    {"cooperative-sticky", rebalance_protocol::cooperative, &assign_cooperative_sticky},
}};

} // namespace

const assignor* find_assignor(std::string_view name) {
  for (const auto& a : assignors)
    if (a.name == name) return &a;
  return nullptr;
}

std::string assignor_names() {
  std::string out;
  for (const auto& a : assignors) out += (out.empty() ? "" : ", ") + std::string(a.name);
  return out;
}

group_assignment assign_range(const std::vector<assignor_member>& members, const partition_counts& counts) {
  auto out = empty_assignment(members);
  const auto order = sorted(members);
  for (const auto& [topic, count] : counts) {
    std::vector<const assignor_member*> takers;
    for (const auto* m : order)
      if (subscribes(*m, topic)) takers.push_back(m);
    if (takers.empty()) continue;
    const auto n = static_cast<int32_t>(takers.size());
    const int32_t each = count / n, extra = count % n;
    for (int32_t i = 0; i < n; ++i) {
      const int32_t start = each * i + std::min(i, extra);
      const int32_t length = each + (i < extra ? 1 : 0);
      for (int32_t p = start; p < start + length; ++p) out[takers[static_cast<size_t>(i)]->member_id][topic].push_back(p);
    }
  }
  return out;
}

group_assignment assign_roundrobin(const std::vector<assignor_member>& members, const partition_counts& counts) {
  auto out = empty_assignment(members);
  const auto order = sorted(members);
  if (order.empty()) return out;
  size_t next = 0;
  for (const auto& [topic, p] : subscribed_partitions(members, counts)) {
    // Some member subscribes to `topic`, so this finds one within a lap.
    for (size_t tried = 0; tried < order.size(); ++tried, next = (next + 1) % order.size()) {
      if (!subscribes(*order[next], topic)) continue;
      out[order[next]->member_id][topic].push_back(p);
      next = (next + 1) % order.size();
      break;
    }
  }
  return out;
}

group_assignment assign_cooperative_sticky(const std::vector<assignor_member>& members,
                                           const partition_counts& counts) {
  const auto order = sorted(members);
  const auto all = subscribed_partitions(members, counts);
  const std::set<partition> exists(all.begin(), all.end());

  // Who claims each partition, from its subscription's owned list. Of several claims, the one
  // from the newest generation stands; claims tied at the newest are all void.
  std::map<partition, std::vector<const assignor_member*>> claims;
  for (const auto* m : order)
    for (const auto& [topic, partitions] : m->subscription.owned)
      for (auto p : partitions) claims[{topic, p}].push_back(m);
  std::map<const assignor_member*, std::vector<partition>> owned;
  std::map<partition, const assignor_member*> owner;
  for (const auto& [tp, claimants] : claims) {
    const assignor_member* best = nullptr;
    bool tied = false;
    for (const auto* m : claimants) {
      if (!best || m->subscription.generation > best->subscription.generation) {
        best = m;
        tied = false;
      } else if (m->subscription.generation == best->subscription.generation) {
        tied = true;
      }
    }
    if (tied || !exists.count(tp) || !subscribes(*best, tp.first)) continue;
    owned[best].push_back(tp);
    owner[tp] = best;
  }

  // The rest go, one at a time, to the least loaded member that subscribes to their topic.
  auto least_loaded = [&](const std::string& topic, size_t below) -> const assignor_member* {
    const assignor_member* pick = nullptr;
    for (const auto* m : order)
      if (subscribes(*m, topic) && owned[m].size() < below && (!pick || owned[m].size() < owned[pick].size()))
        pick = m;
    return pick;
  };
  for (const auto& tp : all) {
    if (owner.count(tp)) continue;
    if (const auto* m = least_loaded(tp.first, SIZE_MAX)) {
      owned[m].push_back(tp);
      owner[tp] = m;
    }
  }

  // Then partitions move from the most loaded members to ones with at least two fewer, until
  // none can: each move lowers the sum of squared loads, so this ends.
  for (bool moved = true; moved;) {
    moved = false;
    std::vector<const assignor_member*> by_load = order;
    std::stable_sort(by_load.begin(), by_load.end(),
                     [&](const auto* a, const auto* b) { return owned[a].size() > owned[b].size(); });
    for (const auto* donor : by_load) {
      auto& mine = owned[donor];
      std::sort(mine.begin(), mine.end());
      for (auto it = mine.rbegin(); it != mine.rend() && !moved; ++it) {
        const auto* taker = least_loaded(it->first, mine.size() - 1);
        if (!taker) continue;
        owned[taker].push_back(*it);
        owner[*it] = taker;
        mine.erase(std::next(it).base());
        moved = true;
      }
      if (moved) break;
    }
  }

  // A partition given to a member other than the one that owns it now waits a generation: its
  // owner must revoke it first, so that no two members ever consume it at once.
  std::map<partition, std::set<const assignor_member*>> claimed_by;
  for (const auto& [tp, claimants] : claims) claimed_by[tp].insert(claimants.begin(), claimants.end());
  auto out = empty_assignment(members);
  for (const auto& [m, tps] : owned)
    for (const auto& tp : tps) {
      const auto c = claimed_by.find(tp);
      if (c != claimed_by.end() && !c->second.count(m)) continue;
      out[m->member_id][tp.first].push_back(tp.second);
    }
  sort_lists(out);
  return out;
}

} // namespace capstan::client
