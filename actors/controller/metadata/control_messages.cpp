#include "actors/controller/metadata/control_messages.hpp"

#include <set>

namespace capstan::controller {

namespace {

partition_control_state control_state(const topic_image& t, size_t i) {
  const auto& p = t.partitions[i];
  return partition_control_state{t.name,   t.id,  partition_id{static_cast<int32_t>(i)},
                                 p.leader, p.leader_epoch, p.isr,
                                 p.partition_epoch, p.replicas};
}

// Fills in the cluster endpoints of the leaders `control` names.
void add_leaders(const metadata_image& image, node_control& control) {
  std::set<node_id> leaders;
  for (const auto& s : control.leader_and_isr)
    if (s.leader != no_leader) leaders.insert(s.leader);
  for (auto id : leaders)
    if (auto b = image.broker(id))
      control.leaders.push_back(
        node_endpoint{id, b->cluster_host, b->client_port, b->cluster_port, b->rack});
}

} // namespace

control_plan plan_control_messages(const metadata_image& before, const metadata_image& after) {
  control_plan plan;
  plan.update_metadata = before.brokers() != after.brokers() || before.topics() != after.topics();
  auto send_to = [&](node_id n) -> node_control* {
    return after.broker(n) == nullptr ? nullptr : &plan.nodes[n];
  };

  for (const auto& [id, t] : after.topics()) {
    const auto old = before.topic(id);
    for (size_t i = 0; i < t.partitions.size(); ++i) {
      const auto& p = t.partitions[i];
      const partition_state* was =
        old != nullptr && i < old->partitions.size() ? &old->partitions[i] : nullptr;
      if (was != nullptr && *was == p) continue;
      for (auto n : p.replicas)
        if (auto c = send_to(n)) c->leader_and_isr.push_back(control_state(t, i));
      if (was == nullptr) continue;
      for (auto n : was->replicas)
        if (!p.has_replica(n))
          if (auto c = send_to(n))
            c->stop_and_delete.push_back(stop_replica_partition{
              t.name, t.id, partition_id{static_cast<int32_t>(i)}, p.leader_epoch});
    }
  }
  for (const auto& [id, t] : before.topics()) {
    if (after.topic(id) != nullptr) continue;
    for (size_t i = 0; i < t.partitions.size(); ++i)
      for (auto n : t.partitions[i].replicas)
        if (auto c = send_to(n))
          c->stop_and_delete.push_back(stop_replica_partition{
            t.name, t.id, partition_id{static_cast<int32_t>(i)}, epoch_during_delete});
  }
  for (auto& [n, control] : plan.nodes) add_leaders(after, control);
  return plan;
}

node_control full_control_messages(const metadata_image& image, node_id node) {
  node_control out;
  for (const auto& [id, t] : image.topics())
    for (size_t i = 0; i < t.partitions.size(); ++i)
      if (t.partitions[i].has_replica(node)) out.leader_and_isr.push_back(control_state(t, i));
  add_leaders(image, out);
  return out;
}

} // namespace capstan::controller
