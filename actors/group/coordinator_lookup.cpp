#include "actors/group/coordinator_lookup.hpp"

#include <algorithm>

#include "actors/group/offset_commit_record.hpp"
#include "runtime/cluster/topic_validation.hpp"

namespace capstan {

coordinator_location find_coordinator(const cluster_metadata& cluster, std::string_view group) {
  coordinator_location out;
  auto t = cluster.topics.find(consumer_offsets_topic);
  if (t == cluster.topics.end() || t->second.partitions.empty()) {
    out.code = errc::coordinator_not_available;
    out.message = std::string(consumer_offsets_topic) + " does not exist yet";
    return out;
  }
  const auto& partitions = t->second.partitions;
  out.partition = offsets_partition_for(group, static_cast<int32_t>(partitions.size()));
  const auto& p = partitions[static_cast<size_t>(out.partition)];
  auto b = std::find_if(cluster.brokers.begin(), cluster.brokers.end(),
                        [&](const broker_info& x) { return x.node_id == p.leader; });
  if (p.leader < 0 || b == cluster.brokers.end()) {
    out.code = errc::coordinator_not_available;
    out.message = std::string(consumer_offsets_topic) + "-" + std::to_string(out.partition) +
                  " has no live leader";
    return out;
  }
  out.node = p.leader;
  out.host = b->host;
  out.port = b->port;
  return out;
}

offsets_topic_plan plan_offsets_topic(int32_t partitions, int16_t replication_factor,
                                      size_t live_nodes) {
  offsets_topic_plan out;
  const auto live = static_cast<int16_t>(std::min<size_t>(live_nodes, 32767));
  out.capped = live < replication_factor;
  const int16_t rf = std::max<int16_t>(1, std::min(replication_factor, live));
  out.spec.name = consumer_offsets_topic;
  out.spec.partitions = partitions;
  out.spec.replication_factor = rf;
  out.spec.configs = {{"cleanup.policy", "compact"},
                      {std::string(min_insync_replicas_key), std::to_string(std::min<int>(2, rf))}};
  return out;
}

} // namespace capstan
