#pragma once

// Where a consumer group's coordinator is, and the topic its offsets live in (docs/groups.md).
// As in Kafka, a group's commits live in one partition of the internal topic __consumer_offsets
// (offsets_partition_for), and the node that leads that partition is the group's coordinator:
// the replica that appends its commits is the one that answers for them. Plain functions over
// the node's metadata cache, shared by FindCoordinator in the gateway and the coordinator's own
// check that it still leads.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/cluster/metadata.hpp"
#include "runtime/errc.hpp"

namespace capstan {

// Kafka's offsets.topic.replication.factor default.
inline constexpr int16_t default_offsets_replication_factor = 3;

struct coordinator_location {
  errc code = errc::none; // COORDINATOR_NOT_AVAILABLE: no topic yet, or no live leader
  std::string message;
  int32_t partition = -1; // of __consumer_offsets; -1 without the topic
  int32_t node = -1;
  std::string host; // the leader's client address
  uint16_t port = 0;
};

// The coordinator of `group` in `cluster`: the live leader of its __consumer_offsets partition.
coordinator_location find_coordinator(const cluster_metadata& cluster, std::string_view group);

// The spec the controller creates __consumer_offsets with on first need: `partitions`
// (offsets.topic.num.partitions), a replication factor of `replication_factor` capped by the
// live nodes, as Kafka caps it at creation (`capped` says it was), compacted, and
// min.insync.replicas 2 where the replication factor allows.
struct offsets_topic_plan {
  topic_spec spec;
  bool capped = false;
};
offsets_topic_plan plan_offsets_topic(int32_t partitions, int16_t replication_factor,
                                      size_t live_nodes);

} // namespace capstan
