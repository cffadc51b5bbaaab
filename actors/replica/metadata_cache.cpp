#include "actors/replica/metadata_cache.hpp"

#include <algorithm>
#include <set>

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
    : defaults_(std::move(broker_defaults)) {
  apply(update);
}

metadata_cache::metadata_cache(const metadata_cache& previous, const update_metadata_msg& delta)
    : cluster_(previous.cluster_), defaults_(previous.defaults_) {
  for (const auto& id : delta.removed_topics)
    std::erase_if(cluster_.topics, [&](const auto& t) { return t.second.id == id; });
  apply(delta);
}

void metadata_cache::apply(const update_metadata_msg& update) {
  controller_epoch_ = update.controller_epoch;
  cluster_.cluster_id = update.cluster_id;
  cluster_.controller_id = update.controller_id;
  cluster_.brokers.clear();
  for (const auto& n : update.nodes) cluster_.brokers.push_back(broker_info{n.node.value(), n.host, n.client_port, n.kafka_host, n.kafka_port});
  for (const auto& t : update.topics) {
    auto& topic = cluster_.topics[t.name];
    // A topic deleted and created again under its name (a delta names only the new one).
    if (topic.id != t.id) topic.partitions.clear();
    topic.name = t.name;
    topic.id = t.id;
    topic.internal = t.internal;
    topic.configs = t.configs;
  }
  std::set<std::string> touched;
  for (const auto& p : update.partitions) {
    auto [it, added] = cluster_.topics.try_emplace(p.tp.first);
    if (added || it->second.id != p.id) {
      it->second = topic_metadata{};
      it->second.name = p.tp.first;
      it->second.id = p.id;
    }
    partition_assignment a{p.tp.second,   ids_of(p.replicas), p.leader.value(),
                           p.epoch.value(), ids_of(p.isr),      ids_of(p.wiped)};
    // Partitions are dense from 0 and usually come in order: both cases without a search.
    auto& parts = it->second.partitions;
    const auto index = static_cast<size_t>(a.partition);
    if (parts.empty() || parts.back().partition < a.partition) {
      parts.push_back(std::move(a));
    } else if (index < parts.size() && parts[index].partition == a.partition) {
      parts[index] = std::move(a);
    } else {
      auto at = std::find_if(parts.begin(), parts.end(),
                             [&](const partition_assignment& x) { return x.partition == a.partition; });
      if (at != parts.end())
        *at = std::move(a);
      else
        parts.push_back(std::move(a));
    }
    touched.insert(p.tp.first);
  }
  for (const auto& name : touched) {
    auto& parts = cluster_.topics.at(name).partitions;
    std::sort(parts.begin(), parts.end(),
              [](const partition_assignment& a, const partition_assignment& b) { return a.partition < b.partition; });
  }
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
