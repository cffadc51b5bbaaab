#include "actors/controller/metadata/control_messages.hpp"

#include <set>

namespace capstan::controller {

namespace {

partition_state_msg control_state(const topic_image& t, size_t i) {
  const auto& p = t.partitions[i];
  return partition_state_msg{topic_partition{t.name, static_cast<int32_t>(i)},
                             t.id,
                             p.leader,
                             p.leader_epoch,
                             p.isr,
                             p.partition_epoch.value(),
                             p.replicas,
                             p.wiped};
}

// What a replica acts on: all but the wiped marks, which only describe reads.
bool same_for_replicas(const partition_state& a, const partition_state& b) {
  return a.replicas == b.replicas && a.isr == b.isr && a.leader == b.leader &&
         a.leader_epoch == b.leader_epoch && a.partition_epoch == b.partition_epoch &&
         a.reassignment == b.reassignment;
}

stop_partition_msg stop_partition(const topic_image& t, size_t i, leader_epoch epoch) {
  return stop_partition_msg{topic_partition{t.name, static_cast<int32_t>(i)}, t.id, epoch};
}

// Fills in the cluster endpoints of the leaders `control` names.
void add_leaders(const metadata_image& image, node_control& control) {
  std::set<node_id> leaders;
  for (const auto& s : control.leader_and_isr)
    if (s.leader != no_leader) leaders.insert(s.leader);
  for (auto id : leaders)
    if (auto b = image.broker(id))
      control.leaders.push_back(
        node_endpoint_msg{id, b->cluster_host, b->client_port, b->cluster_port, b->rack,
                          b->kafka_host, b->kafka_port});
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
      if (was != nullptr && same_for_replicas(*was, p)) continue;
      for (auto n : p.replicas)
        if (auto c = send_to(n)) c->leader_and_isr.push_back(control_state(t, i));
      if (was == nullptr) continue;
      for (auto n : was->replicas)
        if (!p.has_replica(n))
          if (auto c = send_to(n)) c->stop_and_delete.push_back(stop_partition(t, i, p.leader_epoch));
    }
  }
  for (const auto& [id, t] : before.topics()) {
    if (after.topic(id) != nullptr) continue;
    for (size_t i = 0; i < t.partitions.size(); ++i)
      for (auto n : t.partitions[i].replicas)
        if (auto c = send_to(n))
          c->stop_and_delete.push_back(stop_partition(t, i, epoch_during_delete));
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

leader_and_isr_msg leader_and_isr(const node_control& control, controller_stamp stamp) {
  return leader_and_isr_msg{stamp.controller.value(), stamp.epoch, control.leader_and_isr,
                            control.leaders};
}

stop_replica_msg stop_replica(const node_control& control, controller_stamp stamp) {
  return stop_replica_msg{stamp.controller.value(), stamp.epoch, true, control.stop_and_delete};
}

namespace {

update_metadata_msg update_metadata_header(const metadata_image& image, controller_stamp stamp) {
  update_metadata_msg out;
  out.controller_id = stamp.controller.value();
  out.controller_epoch = stamp.epoch;
  out.cluster_id = image.cluster_id();
  for (const auto& [id, b] : image.brokers())
    if (!b.fenced)
      out.nodes.push_back(node_endpoint_msg{id, b.client_host, b.client_port, b.cluster_port, b.rack,
                                                b.kafka_host, b.kafka_port});
  return out;
}

} // namespace

update_metadata_msg update_metadata(const metadata_image& image, controller_stamp stamp) {
  auto out = update_metadata_header(image, stamp);
  for (const auto& [id, t] : image.topics()) {
    out.topics.push_back(topic_config_msg{t.name, t.id, t.internal, t.configs});
    for (size_t i = 0; i < t.partitions.size(); ++i) out.partitions.push_back(control_state(t, i));
  }
  return out;
}

update_metadata_msg update_metadata_delta(const metadata_image& before, const metadata_image& after,
                                          controller_stamp stamp) {
  auto out = update_metadata_header(after, stamp);
  out.full = false;
  for (const auto& [id, t] : after.topics()) {
    const auto old = before.topic(id);
    if (old == nullptr || old->configs != t.configs || old->internal != t.internal)
      out.topics.push_back(topic_config_msg{t.name, t.id, t.internal, t.configs});
    for (size_t i = 0; i < t.partitions.size(); ++i)
      if (old == nullptr || i >= old->partitions.size() || old->partitions[i] != t.partitions[i])
        out.partitions.push_back(control_state(t, i));
  }
  for (const auto& [id, t] : before.topics())
    if (after.topic(id) == nullptr) out.removed_topics.push_back(id);
  return out;
}

} // namespace capstan::controller
