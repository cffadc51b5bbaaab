#pragma once

// Cluster metadata as plain values (shared by the controller, the replicas, the RPC server and
// the client library): brokers, topics, their partitions' replicas, leaders and ISR.
// The metadata actor owns the authoritative copy and hands out immutable snapshots.

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <caf/allowed_unsafe_message_type.hpp>

#include "runtime/result.hpp"
#include "runtime/types.hpp"

namespace capstan {

using topic_id = std::array<uint8_t, 16>;

struct broker_info {
  int32_t node_id = 0;
  std::string host;
  uint16_t port = 0;
  // The Kafka listener clients are sent to (advertised.listeners); port 0: the node has none.
  std::string kafka_host{};
  uint16_t kafka_port = 0;
};

struct partition_assignment {
  int32_t partition = 0;
  std::vector<int32_t> replicas;
  int32_t leader = -1;
  int32_t leader_epoch = 0;
  std::vector<int32_t> isr;
  // Back on a new data dir since last in the ISR: not counted towards recovery (cluster only).
  std::vector<int32_t> wiped;
};

struct topic_metadata {
  std::string name;
  topic_id id{};
  bool internal = false;
  std::vector<partition_assignment> partitions;
  std::map<std::string, std::string> configs; // topic-level overrides only, Kafka names
};

struct cluster_metadata {
  std::string cluster_id;
  int32_t controller_id = -1;
  std::vector<broker_info> brokers;
  std::map<std::string, topic_metadata> topics;
  // The single-node controller's first producer id not yet handed out in a block (the metadata
  // store keeps it); not filled in elsewhere.
  int64_t next_producer_id = 0;
};

using metadata_snapshot = std::shared_ptr<const cluster_metadata>;

struct topic_spec {
  std::string name;
  int32_t partitions = 1;
  int16_t replication_factor = 1;
  std::map<std::string, std::string> configs;
};

// Kafka's topic name rule: 1..249 characters of [a-zA-Z0-9._-], not "." or "..".
// INVALID_TOPIC_EXCEPTION naming what is wrong.
status validate_topic_name(const std::string& name);

// Name, at least 1 partition (INVALID_PARTITIONS) and at most 10,000 (POLICY_VIOLATION),
// 1 <= replication factor <= live brokers (INVALID_REPLICATION_FACTOR), and configs that
// log_config::from_map accepts plus min.insync.replicas (INVALID_CONFIG).
status validate_topic_spec(const topic_spec& spec, size_t live_brokers);

} // namespace capstan

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::metadata_snapshot)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::topic_spec)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::topic_metadata)
