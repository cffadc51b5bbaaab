#pragma once

// Decisions about topics (decision.hpp): create, grow, delete, change configs. Validation reuses
// runtime/cluster/topic_validation; placement is replica_placement (Kafka's), over the unfenced
// nodes in ascending id order.

#include <map>
#include <random>
#include <string>
#include <vector>

#include "actors/controller/metadata/decision.hpp"
#include "actors/controller/metadata/metadata_image.hpp"
#include "runtime/cluster/metadata.hpp"
#include "runtime/result.hpp"

namespace capstan::controller {

// One topic of Kafka's CreateTopics. Partitions and replication factor -1 take the options'
// defaults. Refuses what validate_topic_spec refuses (INVALID_TOPIC_EXCEPTION,
// INVALID_PARTITIONS, POLICY_VIOLATION past 10,000 partitions, INVALID_REPLICATION_FACTOR above
// the unfenced nodes, INVALID_CONFIG), TOPIC_ALREADY_EXISTS, INVALID_TOPIC_EXCEPTION for a name
// that collides over '.' and '_', and POLICY_VIOLATION when a node would pass
// max.broker.partitions. Otherwise a Topic record (an id drawn from `rng`, never all zeros nor in
// use; internal for the node's own topics) and a Partition per partition: replicas from
// assign_replicas with start and shift drawn from `rng`, ISR = replicas, leader = the first
// replica, epochs 0.
result<decision> create_topic(const metadata_image& image, topic_spec spec,
                              const decision_options& options, std::mt19937_64& rng);

// Kafka's CreatePartitions: grows topic `name` to `total` partitions. Refuses
// UNKNOWN_TOPIC_OR_PARTITION; INVALID_PARTITIONS unless `total` is above the current count;
// POLICY_VIOLATION past 10,000 partitions or max.broker.partitions; INVALID_REPLICATION_FACTOR
// when fewer nodes are unfenced than partition 0 has replicas. The new partitions get as many
// replicas as partition 0, placed as Kafka's createNewPartitionsAssignment does: assign_replicas
// from partition `current count`, with start index and shift both the position of the first node
// whose id is at least partition 0's first replica (0 if none), so they continue its stripe.
result<decision> create_partitions(const metadata_image& image, const std::string& name,
                                   int32_t total, const decision_options& options);

// RemoveTopic. Refuses UNKNOWN_TOPIC_OR_PARTITION, and POLICY_VIOLATION for the node's internal
// topics (runtime/cluster/topic_validation.hpp, is_internal_topic).
result<decision> delete_topic(const metadata_image& image, const std::string& name);

// Sets `changes` over topic `name`'s overrides and removes the `deleted` keys from them
// (altered_topic_configs): a TopicConfig record with the new overrides, or nothing when they are
// already so. Refuses UNKNOWN_TOPIC_OR_PARTITION and INVALID_CONFIG (naming the key).
result<decision> alter_configs(const metadata_image& image, const std::string& name,
                               const std::map<std::string, std::string>& changes,
                               const std::vector<std::string>& deleted);

// A single node's topics from before it ran the controller quorum of itself alone (its metadata
// store, runtime/cluster/metadata_store.hpp), and the first producer id it had not handed out.
struct import_topics_msg {
  node_id node{0};
  std::vector<topic_metadata> topics;
  int64_t next_producer_id = 0;
};

// Adopts `m`'s topics with their ids, overrides, partitions and leader epochs: a Topic record
// and a Partition record per partition (replicas, ISR and leader the node, partition epoch 0)
// for each topic the image lacks, and a ProducerIds record up to next_producer_id when the
// image's blocks start below it, so no producer id is handed out twice. A topic the image already
// holds under the same id and name is skipped (an import repeated after a crash). Refuses
// TOPIC_ALREADY_EXISTS for a name the image holds under another id or an id under another name,
// and INVALID_REQUEST for a topic id of zeros, partitions not numbered 0, 1, ..., or replicas
// other than the node alone.
result<decision> import_topics(const metadata_image& image, const import_topics_msg& m);

} // namespace capstan::controller
