#pragma once

// The client RPC server: serves schema/client.capnp's Capstan interface with Cap'n Proto RPC on
// its own kj event-loop thread. A call goes straight to the actor that answers it (the partition
// replica for produce/fetch/listOffsets, found in the replica manager's routing table without a
// message round trip) and completes through a cross-thread fulfiller: it blocks neither the kj
// loop nor a CAF worker (docs/protocol.md, "Threads and the CAF bridge"). Every request is
// validated; errors come back as errorCode/errorMessage, never as a dropped connection (only a
// message above socket.request.max.bytes ends one). Connections, message sizes, requests and
// answers in flight and parked fetches are bounded (rpc_limits.hpp); accepting never stops while
// the server runs, whatever accept() fails with.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/fwd.hpp>

#include "actors/controller/controller_client_actor.hpp"
#include "actors/controller/metadata_actor.hpp"
#include "actors/gateway/rpc_limits.hpp"
#include "actors/group/coordinator_lookup.hpp"
#include "actors/group/group_coordinator_actor.hpp"
#include "actors/replica/metadata_cache.hpp"
#include "actors/replica/replica_messages.hpp"
#include "runtime/cluster/broker_config_entry.hpp"
#include "runtime/cluster/node_fault_switch.hpp"
#include "runtime/result.hpp"

namespace capstan {

class metrics_registry;

struct rpc_targets {
  // The node's own metadata (its node-local __consumer_offsets): metadata, listTopics and
  // describeConfigs are answered from it until the controller's first UpdateMetadata.
  metadata_actor metadata;
  group_coordinator_actor groups;
  // The replica manager's current routing table (std::atomic_load of a shared pointer it owns).
  std::function<routing_table_ptr()> routes;
  // Counters and histograms the server updates (may be null in tests).
  std::shared_ptr<metrics_registry> metrics;
  // The node's metadata cache from the controller's UpdateMetadata (metadata_cache_registry::
  // current). While it gives a cache, metadata, listTopics and describeConfigs are answered from
  // it.
  std::function<metadata_cache_ptr()> controller_metadata;
  // The way to the active controller: every topic, producer id, election, reassignment and
  // quorum call goes there.
  controller_client_actor controller;
  // The node's fault switch (fault.injection.enable); null: injectFault is refused with
  // POLICY_VIOLATION.
  std::shared_ptr<node_fault_switch> faults;
  // This node's id: createTopic and createPartitions also wait until its replicas of the new
  // partitions are open (-1: they do not).
  int32_t node = -1;
  // offsets.topic.num.partitions and offsets.topic.replication.factor: what FindCoordinator has
  // the controller create __consumer_offsets with on a group's first call.
  int32_t offsets_partitions = 1;
  int16_t offsets_replication_factor = default_offsets_replication_factor;
  // This node's configuration as a Kafka DescribeConfigs of a broker resource naming `node`
  // answers it (node_config::broker_configs, rendered once at start); empty: no configs.
  std::vector<broker_config_entry> broker_configs{};
};

// Where the Kafka listener binds (docs/kafka.md, "The listener"); port 0: any free port.
struct kafka_listen_address {
  std::string host;
  uint16_t port = 0;
};

class rpc_server {
public:
  // Binds host:port (port 0: any free port), and `kafka` if given, and starts serving both on
  // one kj thread: the two front doors share the handlers, the bridge, the node's calls in
  // flight and max.connections. Errors: an address is unusable (NETWORK_EXCEPTION naming it).
  // REQUIRES: limits.socket_request_max_bytes >= min_socket_request_max_bytes, the connection
  // limits >= 1, the parked-fetch caps >= 0 (node_config checks them).
  static result<std::unique_ptr<rpc_server>> start(
      caf::actor_system& sys, rpc_targets targets, const std::string& host, uint16_t port,
      rpc_limits limits = {}, std::optional<kafka_listen_address> kafka = std::nullopt);
  // Stops accepting and fails in-flight calls; joins the kj thread. Idempotent.
  void stop();
  ~rpc_server();
  rpc_server(const rpc_server&) = delete;
  rpc_server& operator=(const rpc_server&) = delete;

  uint16_t port() const;
  // The Kafka listener's bound port; 0 when the server has none.
  uint16_t kafka_port() const;
  // The bridge actor calls go through now (rpc_bridge.hpp); tests kill it to see it replaced.
  caf::actor bridge() const;

  struct impl;

private:
  explicit rpc_server(std::unique_ptr<impl> impl);
  std::unique_ptr<impl> impl_;
};

} // namespace capstan
