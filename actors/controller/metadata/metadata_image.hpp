#pragma once

// The committed cluster state, built only by applying metadata records in log order. Applying is
// deterministic: the same records give the same image on every controller. A record that
// contradicts the image (an unknown topic id, a partition epoch that does not follow on, a stale
// broker epoch, ...) is an error value and leaves the image unchanged; a batch (one Raft entry)
// applies all or nothing.
//
// Invariants every applied record keeps, per partition: replicas are non-empty and distinct; the
// ISR is a subset of the replicas, empty only without a leader (KIP-966: its last member came
// back with a log that may lack what it held); the leader is -1 or in the ISR; a reassignment's
// adding and removing replicas are distinct replicas, none both, and leave a target; the wiped
// replicas are replicas outside the ISR; epochs only grow.
//
// Wiped replicas are the one state no record names directly: a RegisterBroker from a new data dir
// marks the node's replicas outside the ISR, and a replica loses the mark when a change puts it in
// the ISR or takes it out of the replica set (snapshots carry the marks in Partition records).
//
// Not thread-safe; a value type (copy it to keep the state before a change, see
// control_messages.hpp).

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "actors/controller/metadata/metadata_records.hpp"
#include "actors/controller/metadata/metadata_types.hpp"
#include "runtime/cluster/metadata.hpp"
#include "runtime/result.hpp"

namespace capstan::controller {

struct broker_registration {
  node_id id;
  incarnation_id incarnation{};
  broker_epoch epoch;
  std::string client_host;
  uint16_t client_port = 0;
  std::string cluster_host;
  uint16_t cluster_port = 0;
  std::string rack; // empty: no rack
  bool fenced = true;
  // The Kafka listener clients are sent to (advertised.listeners); port 0: the node has none.
  std::string kafka_host{};
  uint16_t kafka_port = 0;

  bool operator==(const broker_registration&) const = default;
};

struct partition_state {
  std::vector<node_id> replicas; // the first is the preferred leader
  std::vector<node_id> isr;
  node_id leader = no_leader;
  capstan::leader_epoch leader_epoch{0};
  controller::partition_epoch partition_epoch{0};
  reassignment_state reassignment;
  // Replicas whose node came back on a new data dir since they were last in the ISR: their logs
  // may lack acknowledged records, so leader_recovery.hpp neither counts nor elects them.
  std::vector<node_id> wiped;

  node_id preferred() const { return replicas.empty() ? no_leader : replicas.front(); }
  bool has_replica(node_id n) const;
  bool in_isr(node_id n) const;
  bool is_wiped(node_id n) const;

  bool operator==(const partition_state&) const = default;
};

struct topic_image {
  std::string name;
  topic_id id{};
  bool internal = false;
  std::map<std::string, std::string> configs; // overrides only
  std::vector<partition_state> partitions;    // indexed by partition id

  bool operator==(const topic_image&) const = default;
};

class metadata_image {
public:
  // An empty cluster. RegisterBroker records of another cluster id are refused.
  explicit metadata_image(std::string cluster_id = {});

  metadata_image(const metadata_image&) = default;
  metadata_image(metadata_image&&) noexcept = default;
  metadata_image& operator=(const metadata_image&) = default;
  metadata_image& operator=(metadata_image&&) noexcept = default;
  ~metadata_image() = default;

  // Applies one record; on error the image is unchanged.
  status apply(const metadata_record& record);
  // Applies a batch in order, all or nothing; the error names the record that failed.
  status apply(const std::vector<metadata_record>& batch);

  const std::string& cluster_id() const { return cluster_id_; }

  const std::map<node_id, broker_registration>& brokers() const { return brokers_; }
  // nullptr when the node never registered.
  const broker_registration* broker(node_id id) const;
  // Registered and not fenced: may lead and be in an ISR.
  bool is_unfenced(node_id id) const;
  // Ascending.
  std::vector<node_id> unfenced_brokers() const;
  // The highest epoch any registration had (0 before the first): the next one gets more.
  broker_epoch max_broker_epoch() const { return max_broker_epoch_; }
  // For a snapshot's image: its records hold only the nodes still registered, so the highest
  // epoch of a node unregistered since comes from the snapshot itself.
  void raise_max_broker_epoch(broker_epoch epoch) {
    max_broker_epoch_ = std::max(max_broker_epoch_, epoch);
  }

  const std::map<topic_id, topic_image>& topics() const { return topics_; }
  // nullptr when unknown.
  const topic_image* topic(const topic_id& id) const;
  const topic_image* topic_by_name(const std::string& name) const;
  const partition_state* partition(const topic_id& id, partition_id p) const;

  // The first producer id not yet handed out.
  int64_t next_producer_id() const { return next_producer_id_; }

  // What the gateway answers clients from: unfenced brokers (client endpoints) and every topic.
  cluster_metadata to_cluster_metadata(node_id controller) const;

  // Records that rebuild this image when applied to metadata_image(cluster_id()) (the snapshot's
  // content): per broker RegisterBroker (+ UnfenceBroker), per topic Topic and its Partitions,
  // then ProducerIds.
  std::vector<metadata_record> to_records() const;

  bool operator==(const metadata_image&) const = default;

private:
  status apply_register(const register_broker_record& r);
  status apply_fencing(node_id node, broker_epoch epoch, bool fenced);
  status apply_unregister(const unregister_broker_record& r);
  status apply_topic(const topic_record& r);
  status apply_partition(const partition_record& r);
  status apply_change(const partition_change_record& r);
  status apply_remove(const remove_topic_record& r);
  status apply_config(const topic_config_record& r);
  status apply_producer_ids(const producer_ids_record& r);

  std::string cluster_id_;
  std::map<node_id, broker_registration> brokers_;
  broker_epoch max_broker_epoch_{0};
  std::map<topic_id, topic_image> topics_;
  std::map<std::string, topic_id> topic_ids_;
  int64_t next_producer_id_ = 0;
};

} // namespace capstan::controller
