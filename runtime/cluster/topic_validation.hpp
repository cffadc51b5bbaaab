#pragma once

// Topic validation beyond runtime/cluster/metadata.hpp's declarations: the limits, the config
// check that createTopic and alterConfigs share, which topics are internal, and name collisions.

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "runtime/cluster/metadata.hpp"
#include "runtime/result.hpp"

namespace capstan {

inline constexpr size_t max_topic_name_length = 249;
// Kafka's controller refuses an operation of more than 10,000 metadata records
// (QuorumController.MAX_RECORDS_PER_USER_OP) with POLICY_VIOLATION; capstan caps a topic at as
// many partitions.
inline constexpr int32_t max_topic_partitions = 10000;

// Partition replicas one node may host: capstan's own config (KIP-578 proposed this name for
// Kafka, which never shipped it). A topic that would put more on any node is POLICY_VIOLATION.
inline constexpr const char* max_broker_partitions_key = "max.broker.partitions";
// File descriptors a node keeps for everything but partitions (sockets, checkpoints, the
// metadata store, logging).
inline constexpr uint64_t reserved_file_descriptors = 256;
// Files a partition holds open at the least: its active segment's .log (its indexes open their
// files only while they write them, runtime/storage/index_file.hpp).
inline constexpr uint64_t file_descriptors_per_partition = 1;

// The partitions an open-file limit can hold: (limit - reserved) / per partition, at least 1 and
// at most 2^31-1.
int32_t max_broker_partitions_for(uint64_t open_file_limit);
// max_broker_partitions_for(this process's soft RLIMIT_NOFILE); 2^31-1 when it is unlimited or
// unknown.
int32_t default_max_broker_partitions();
// A topic config that log_config does not hold: acks=all needs at least this many in-sync replicas.
inline constexpr const char* min_insync_replicas_key = "min.insync.replicas";

// The node's own topic of committed offsets (actors/group), created at start-up.
inline constexpr const char* consumer_offsets_topic = "__consumer_offsets";

// True for the topics the node creates for itself and keeps (only __consumer_offsets so far):
// they cannot be deleted. Other names starting with "__" are ordinary topics, as in Kafka.
bool is_internal_topic(const std::string& name);

// Kafka's Topic.hasCollision: `name` collides with an existing topic whose name differs only by
// '.' versus '_' (metric names cannot tell them apart). INVALID_TOPIC_EXCEPTION in Kafka's words,
// "Topic 'a.b' collides with existing topic: a_b". An existing topic of the very same name is no
// collision (TOPIC_ALREADY_EXISTS is the caller's to report).
status check_topic_collision(const std::string& name, const std::vector<std::string>& existing);

// Topic-level configs: every key log_config::from_map accepts, plus min.insync.replicas (>= 1,
// as Kafka checks it), unclean.leader.election.enable and leader.replication.throttled.rate.
// INVALID_CONFIG naming the first bad key.
status validate_topic_configs(const std::map<std::string, std::string>& configs);

// Every key validate_topic_configs accepts, as docs/configuration.md must list them.
std::set<std::string> topic_config_keys();

// Kafka's IncrementalAlterConfigs on a topic's overrides: each key of `set` takes its value, each
// key of `deleted` is no longer overridden (the node's default applies again; deleting a key that
// is not overridden changes nothing). The result is validated as a whole.
// Errors: INVALID_CONFIG for a key both set and deleted, a deleted key that is no topic config, a
// key deleted twice, or what validate_topic_configs refuses.
result<std::map<std::string, std::string>> altered_topic_configs(
  std::map<std::string, std::string> overrides, const std::map<std::string, std::string>& set,
  const std::vector<std::string>& deleted);

// Parses min.insync.replicas; INVALID_CONFIG unless an integer in [1, 2^31-1].
result<int32_t> parse_min_insync_replicas(const std::string& text);

// A topic config that log_config does not hold either: whether the controller may make a replica
// outside the ISR leader when no ISR member is live (records only the old ISR had are then lost).
inline constexpr const char* unclean_leader_election_key = "unclean.leader.election.enable";

// A topic config the leader's replicas read: bytes per second served to followers outside the ISR
// (Kafka's broker-wide leader.replication.throttled.rate, per partition leader here).
inline constexpr const char* leader_throttle_key = "leader.replication.throttled.rate";

// Parses leader.replication.throttled.rate; INVALID_CONFIG unless an integer >= 1.
result<int64_t> parse_throttled_rate(const std::string& text);

// Parses a boolean config as Kafka does: "true" or "false" in any case; INVALID_CONFIG otherwise.
result<bool> parse_boolean_config(const std::string& key, const std::string& text);

// POLICY_VIOLATION naming the node when `added` would put more than `limit` partition replicas
// on a node that already hosts those of `topics`.
status check_broker_partition_limit(const std::map<std::string, topic_metadata>& topics,
                                    const std::vector<partition_assignment>& added, int32_t limit);

} // namespace capstan
