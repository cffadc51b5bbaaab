#include "actors/replica/metadata_cache.hpp"

#include <algorithm>

namespace capstan {

namespace {

std::vector<int32_t> ids_of(const std::vector<node_id>& nodes) {
  std::vector<int32_t> out;
  out.reserve(nodes.size());
  for (auto n : nodes) out.push_back(n.value());
  return out;
}

} // namespace

metadata_cache::metadata_cache(const update_metadata_msg& update,
                               std::map<std::string, std::string> broker_defaults)
    : controller_epoch_(update.controller_epoch), defaults_(std::move(broker_defaults)) {
  cluster_.cluster_id = update.cluster_id;
  cluster_.controller_id = update.controller_id;
  for (const auto& n : update.nodes) cluster_.brokers.push_back(broker_info{n.node.value(), n.host, n.client_port});
  for (const auto& t : update.topics) {
    auto& topic = cluster_.topics[t.name];
    topic.name = t.name;
    topic.id = t.id;
    topic.internal = t.internal;
    topic.configs = t.configs;
  }
  for (const auto& p : update.partitions) {
    auto [it, added] = cluster_.topics.try_emplace(p.tp.first);
    if (added) {
      it->second.name = p.tp.first;
      it->second.id = p.id;
    }
    it->second.partitions.push_back(partition_assignment{p.tp.second, ids_of(p.replicas), p.leader.value(),
                                                         p.epoch.value(), ids_of(p.isr)});
  }
  for (auto& [name, topic] : cluster_.topics)
    std::sort(topic.partitions.begin(), topic.partitions.end(),
              [](const partition_assignment& a, const partition_assignment& b) { return a.partition < b.partition; });
}

result<std::map<std::string, std::string>> metadata_cache::describe(const std::string& topic) const {
  auto it = cluster_.topics.find(topic);
  if (it == cluster_.topics.end())
    return make_error(errc::unknown_topic_or_partition, "topic '" + topic + "' does not exist");
  auto out = defaults_;
  for (const auto& [k, v] : it->second.configs) out[k] = v;
  return out;
}

std::optional<leader_epoch> metadata_cache::led_by(const std::string& topic, const topic_id& id,
                                                   int32_t partition, node_id node) const {
  auto it = cluster_.topics.find(topic);
  if (it == cluster_.topics.end() || it->second.id != id) return std::nullopt;
  for (const auto& p : it->second.partitions)
    if (p.partition == partition && p.leader == node.value()) return leader_epoch{p.leader_epoch};
  return std::nullopt;
}

} // namespace capstan
