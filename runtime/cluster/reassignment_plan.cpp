#include "runtime/cluster/reassignment_plan.hpp"

#include <algorithm>

namespace capstan {

namespace {

error unknown_topic(const std::string& topic) {
  return make_error(errc::unknown_topic_or_partition, "topic '" + topic + "' does not exist");
}

} // namespace

result<std::vector<client::reassignment_request>>
plan_node_replacement(const cluster_metadata& md, const std::optional<std::string>& topic,
                      int32_t from, int32_t to) {
  if (from == to)
    return make_error(errc::invalid_replica_assignment,
                      "node " + std::to_string(from) + " cannot replace itself");
  if (topic && md.topics.count(*topic) == 0) return unknown_topic(*topic);
  std::vector<client::reassignment_request> out;
  for (const auto& [name, t] : md.topics) {
    if (topic && name != *topic) continue;
    for (const auto& p : t.partitions) {
      auto replicas = p.replicas;
      auto it = std::find(replicas.begin(), replicas.end(), from);
      if (it == replicas.end()) continue;
      if (std::find(replicas.begin(), replicas.end(), to) != replicas.end())
        return make_error(errc::invalid_replica_assignment,
                          name + "-" + std::to_string(p.partition) + " has replicas on both node " +
                            std::to_string(from) + " and node " + std::to_string(to) +
                            ": replacing one by the other would leave it a replica short");
      *it = to;
      out.push_back(client::reassignment_request{name, p.partition, std::move(replicas)});
    }
  }
  return out;
}

result<std::vector<client::reassignment_request>>
plan_partition_targets(const cluster_metadata& md, const std::string& topic,
                       std::optional<int32_t> partition, const std::vector<int32_t>& replicas) {
  auto it = md.topics.find(topic);
  if (it == md.topics.end()) return unknown_topic(topic);
  std::vector<client::reassignment_request> out;
  for (const auto& p : it->second.partitions)
    if (!partition || p.partition == *partition)
      out.push_back(client::reassignment_request{topic, p.partition, replicas});
  if (partition && out.empty())
    return make_error(errc::unknown_topic_or_partition,
                      "topic '" + topic + "' has no partition " + std::to_string(*partition));
  return out;
}

} // namespace capstan
