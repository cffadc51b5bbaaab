#pragma once

// The node's metadata cache (Kafka's MetadataCache): the cluster as the controller's latest
// accepted UpdateMetadata describes it. Live nodes with their client addresses, topics with their
// ids and config overrides, and each partition's leader, leader epoch, replicas and ISR. The
// replica manager builds one from every UpdateMetadata it accepts (a full one, or the previous
// cache with a delta) and publishes it whole in a
// metadata_cache_registry; the client gateway answers Metadata, listTopics and describeConfigs
// from it on the RPC thread without a message round trip. A node that never accepted an
// UpdateMetadata has no cache and answers from its own single-node metadata
// (actors/controller/metadata_actor).

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "actors/replica/control_codec.hpp"
#include "runtime/cluster/metadata.hpp"
#include "runtime/result.hpp"

namespace capstan {

class metadata_cache {
public:
  // From a full UpdateMetadata (update.full), which carries the whole cluster. `broker_defaults`:
  // this node's topic config defaults (its log configs and min.insync.replicas), which
  // describe() overlays with a topic's overrides, as a broker answers DescribeConfigs.
  metadata_cache(const update_metadata_msg& update, std::map<std::string, std::string> broker_defaults);
  // `previous` with a delta UpdateMetadata (!delta.full) applied: its nodes replace the
  // previous ones, its topics' configs and partition states replace or add to theirs, its
  // removed topics go.
  metadata_cache(const metadata_cache& previous, const update_metadata_msg& delta);

  // Brokers are the UpdateMetadata's nodes at their client host and port; topics list their
  // partitions in partition order. A partition state whose topic the update does not list as a
  // topic still appears, under its name and id, with no configs.
  const cluster_metadata& cluster() const { return cluster_; }
  int32_t controller_epoch() const { return controller_epoch_; }

  // The topic's effective configs. Errors: UNKNOWN_TOPIC_OR_PARTITION.
  result<std::map<std::string, std::string>> describe(const std::string& topic) const;

  // The leader epoch of the partition if this cache names `node` its leader; nullopt otherwise,
  // also when the cache's topic of that name has another id (deleted and created again).
  std::optional<leader_epoch> led_by(const std::string& topic, const topic_id& id,
                                     int32_t partition, node_id node) const;

private:
  void apply(const update_metadata_msg& update);

  cluster_metadata cluster_;
  int32_t controller_epoch_ = 0;
  std::map<std::string, std::string> defaults_;
};

using metadata_cache_ptr = std::shared_ptr<const metadata_cache>;

// The current cache, replaced whole by the replica manager and read from any thread (the RPC
// thread) without a message round trip, as routing_registry.
class metadata_cache_registry {
public:
  metadata_cache_registry() = default;
  metadata_cache_registry(const metadata_cache_registry&) = delete;
  metadata_cache_registry& operator=(const metadata_cache_registry&) = delete;

  // Null until the node accepted a controller's UpdateMetadata.
  metadata_cache_ptr current() const { return std::atomic_load(&cache_); }
  // Only the replica manager publishes.
  void publish(metadata_cache_ptr cache) { std::atomic_store(&cache_, std::move(cache)); }

private:
  metadata_cache_ptr cache_;
};

} // namespace capstan
