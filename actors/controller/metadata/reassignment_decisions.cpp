#include "actors/controller/metadata/reassignment_decisions.hpp"

#include <algorithm>
#include <set>
#include <utility>

#include "actors/controller/metadata/leader_election.hpp"

namespace capstan::controller {

namespace {

bool contains(const std::vector<node_id>& nodes, node_id n) {
  return std::find(nodes.begin(), nodes.end(), n) != nodes.end();
}

// The members of `nodes` that are (`keep` true) or are not in `other`, in `nodes`' order.
std::vector<node_id> filter(const std::vector<node_id>& nodes, const std::vector<node_id>& other,
                            bool keep) {
  std::vector<node_id> out;
  for (auto n : nodes)
    if (contains(other, n) == keep) out.push_back(n);
  return out;
}

std::string name_of(const partition_ref& p) {
  return p.topic + "-" + std::to_string(p.partition.value());
}

// `current` with `change` applied.
partition_state changed(const partition_state& current, const partition_change_record& change) {
  partition_state out = current;
  if (change.leader) out.leader = *change.leader;
  if (change.isr) out.isr = *change.isr;
  if (change.replicas) out.replicas = *change.replicas;
  if (change.reassignment) out.reassignment = *change.reassignment;
  out.leader_epoch = change.leader_epoch;
  out.partition_epoch = change.partition_epoch;
  return out;
}

// The record taking `current` to `wanted` (whose epochs are ignored); nullopt when they agree.
std::optional<partition_change_record> change_to(const topic_id& topic, partition_id p,
                                                 const partition_state& current,
                                                 const partition_state& wanted) {
  partition_change_record out;
  out.topic = topic;
  out.partition = p;
  if (wanted.leader != current.leader) out.leader = wanted.leader;
  if (wanted.isr != current.isr) out.isr = wanted.isr;
  if (wanted.replicas != current.replicas) out.replicas = wanted.replicas;
  if (wanted.reassignment != current.reassignment) out.reassignment = wanted.reassignment;
  if (!out.leader && !out.isr && !out.replicas && !out.reassignment) return std::nullopt;
  out.leader_epoch = out.leader ? next(current.leader_epoch) : current.leader_epoch;
  out.partition_epoch = next(current.partition_epoch);
  return out;
}

// `state` with its leader kept if still in its ISR, else elected cleanly among `replicas`.
void keep_or_elect(const metadata_image& image, partition_state& state) {
  if (state.leader != no_leader && contains(state.isr, state.leader)) return;
  auto live = [&image](node_id n) { return image.is_unfenced(n); };
  state.leader = elect_leader(state.replicas, state.isr, live, false).leader;
}

status check_target(const metadata_image& image, const std::vector<node_id>& target,
                    const std::string& name) {
  auto invalid = [&](const std::string& why) {
    return make_error(errc::invalid_replica_assignment,
                      "replicas " + to_string(target) + " for " + name + ": " + why);
  };
  if (target.empty()) return invalid("no replicas");
  std::set<node_id> seen;
  for (auto n : target) {
    if (!seen.insert(n).second) return invalid("node " + std::to_string(n.value()) + " twice");
    if (image.broker(n) == nullptr)
      return invalid("node " + std::to_string(n.value()) + " is not registered");
  }
  return {};
}

// The state a cancel goes back to, or why it cannot.
result<partition_state> cancelled(const metadata_image& image, const partition_state& current,
                                   const std::string& name) {
  if (!current.reassignment.running())
    return make_error(errc::no_reassignment_in_progress, name + " runs no reassignment");
  partition_state out = current;
  out.replicas = filter(current.replicas, current.reassignment.adding, false);
  out.isr = filter(current.isr, out.replicas, true);
  if (out.isr.empty())
    return make_error(errc::invalid_replica_assignment,
                      "cancelling the reassignment of " + name + " would leave no ISR member: " +
                        "ISR " + to_string(current.isr) + " holds only replicas it added");
  out.reassignment = {};
  keep_or_elect(image, out);
  return out;
}

// The state a new target starts (complete_reassignment finishes it when it can).
partition_state started(const partition_state& current, const std::vector<node_id>& target) {
  partition_state out = current;
  const auto removing = filter(current.replicas, target, false);
  out.replicas = target;
  out.replicas.insert(out.replicas.end(), removing.begin(), removing.end());
  out.reassignment = reassignment_state{filter(target, current.replicas, false), removing};
  return out;
}

} // namespace

std::optional<partition_change_record> complete_reassignment(
  const metadata_image& image, const topic_id& topic, partition_id p,
  const partition_state& current, std::optional<partition_change_record> change) {
  const partition_state after = change ? changed(current, *change) : current;
  if (!after.reassignment.running()) return change;
  const auto target = filter(after.replicas, after.reassignment.removing, false);
  for (auto n : target)
    if (!after.in_isr(n)) return change;
  partition_state done = after;
  done.replicas = target;
  done.isr = filter(after.isr, target, true);
  done.reassignment = {};
  keep_or_elect(image, done);
  return change_to(topic, p, current, done);
}

reassignment_decision alter_reassignments(const metadata_image& image,
                                          const std::vector<reassignment_target>& targets) {
  reassignment_decision out;
  std::set<std::pair<std::string, partition_id>> seen;
  for (const auto& t : targets) {
    const auto name = name_of(t.partition);
    auto refuse = [&](error why) { out.results.push_back({t.partition, std::move(why)}); };
    auto topic = image.topic_by_name(t.partition.topic);
    auto current = topic ? image.partition(topic->id, t.partition.partition) : nullptr;
    if (current == nullptr) {
      refuse(make_error(errc::unknown_topic_or_partition, "no partition " + name));
      continue;
    }
    if (!seen.insert({t.partition.topic, t.partition.partition}).second) {
      refuse(make_error(errc::invalid_request, name + " appears twice in one request"));
      continue;
    }
    partition_state wanted;
    if (t.replicas) {
      if (auto s = check_target(image, *t.replicas, name); !s) {
        refuse(s.err());
        continue;
      }
      wanted = started(*current, *t.replicas);
    } else {
      auto back = cancelled(image, *current, name);
      if (!back) {
        refuse(back.err());
        continue;
      }
      wanted = std::move(*back);
    }
    auto change = complete_reassignment(image, topic->id, t.partition.partition, *current,
                                        change_to(topic->id, t.partition.partition, *current,
                                                  wanted));
    if (change) {
      // A cancel or completion that found no live leader leaves the partition offline.
      if (change->leader && *change->leader == no_leader)
        out.changes.warnings.push_back(name + " has no live ISR member to lead it after its "
                                              "reassignment changed; it is offline");
      out.changes.records.push_back(std::move(*change));
    }
    out.results.push_back({t.partition, error{}});
  }
  return out;
}

} // namespace capstan::controller
