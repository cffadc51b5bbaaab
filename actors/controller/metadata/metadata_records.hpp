#pragma once

// The records of the controller's metadata log (schema/metadata.capnp), as plain values. The
// image is built only by applying them in log order (metadata_image); decisions return them
// (decision.hpp); the codec turns a batch into a Raft entry's bytes (metadata_record_codec).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "actors/controller/metadata/metadata_types.hpp"

namespace capstan::controller {

// A node's registration. It starts fenced; UnfenceBroker makes it eligible for leadership and
// the ISR.
struct register_broker_record {
  node_id node;
  incarnation_id incarnation{};
  std::string cluster_id;
  std::string client_host;
  uint16_t client_port = 0;
  std::string cluster_host;
  uint16_t cluster_port = 0;
  std::string rack; // empty: no rack
  broker_epoch epoch;
  // Its data dir named no earlier incarnation: it marks its replicas outside the ISR wiped
  // (partition_state::wiped).
  bool new_data_dir = false;
  // The Kafka listener clients are sent to (advertised.listeners); port 0: the node has none.
  std::string kafka_host{};
  uint16_t kafka_port = 0;

  bool operator==(const register_broker_record&) const = default;
};

struct fence_broker_record {
  node_id node;
  broker_epoch epoch; // of the registration it fences

  bool operator==(const fence_broker_record&) const = default;
};

struct unfence_broker_record {
  node_id node;
  broker_epoch epoch;

  bool operator==(const unfence_broker_record&) const = default;
};

// A fenced node gone for good leaves the image (KRaft's UnregisterBrokerRecord).
struct unregister_broker_record {
  node_id node;
  broker_epoch epoch;

  bool operator==(const unregister_broker_record&) const = default;
};

struct topic_record {
  std::string name;
  topic_id id{};
  bool internal = false;
  std::map<std::string, std::string> configs; // overrides only, Kafka's names

  bool operator==(const topic_record&) const = default;
};

// A partition's replica reassignment while it runs (KIP-455): the replica set holds the target
// replicas and the ones leaving; `adding` are target replicas that were not replicas before,
// `removing` the replicas not in the target. It ends when every target replica is in the ISR.
// Both empty: none runs.
struct reassignment_state {
  std::vector<node_id> adding;
  std::vector<node_id> removing;

  bool running() const { return !adding.empty() || !removing.empty(); }
  bool operator==(const reassignment_state&) const = default;
};

// A new partition, the next of its topic (partitions are numbered densely from 0).
struct partition_record {
  topic_id topic{};
  partition_id partition;
  std::vector<node_id> replicas; // the first is the preferred leader
  std::vector<node_id> isr;
  node_id leader = no_leader;
  capstan::leader_epoch leader_epoch{0};
  controller::partition_epoch partition_epoch{0};
  reassignment_state reassignment;
  std::vector<node_id> wiped; // partition_state::wiped

  bool operator==(const partition_record&) const = default;
};

// A change to an existing partition and the epochs it results in: partition_epoch is the current
// one + 1; leader_epoch is the current one + 1 when `leader` is set, else the current one.
struct partition_change_record {
  topic_id topic{};
  partition_id partition;
  std::optional<node_id> leader;
  std::optional<std::vector<node_id>> isr;
  std::optional<std::vector<node_id>> replicas;
  capstan::leader_epoch leader_epoch{0};
  controller::partition_epoch partition_epoch{0};
  std::optional<reassignment_state> reassignment;

  bool operator==(const partition_change_record&) const = default;
};

struct remove_topic_record {
  topic_id topic{};

  bool operator==(const remove_topic_record&) const = default;
};

// Replaces the topic's overrides (so one record both sets and removes keys).
struct topic_config_record {
  topic_id topic{};
  std::map<std::string, std::string> configs;

  bool operator==(const topic_config_record&) const = default;
};

// Producer ids [first_id, first_id + size) are handed out (nodes get them in blocks).
struct producer_ids_record {
  int64_t first_id = 0;
  int64_t size = 0;

  bool operator==(const producer_ids_record&) const = default;
};

using metadata_record =
  std::variant<register_broker_record, fence_broker_record, unfence_broker_record, topic_record,
               partition_record, partition_change_record, remove_topic_record,
               topic_config_record, producer_ids_record, unregister_broker_record>;

// The record's kind as schema/metadata.capnp names it ("RegisterBroker", ...), for log lines.
std::string_view record_kind(const metadata_record& record);

} // namespace capstan::controller
