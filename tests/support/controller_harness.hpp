#pragma once

// Whole nodes with the controller quorum, in one process: each node is its own actor system with
// a quorum member, a controller actor, a replica manager and a broker lifecycle behind one node
// endpoint published on 127.0.0.1, as a voter node runs them. No test stand-in plays the
// controller: nodes register and heartbeat, the active controller decides through the quorum and
// sends LeaderAndIsr / UpdateMetadata / StopReplica, and leaders' AlterPartition goes back to it,
// all as frames over CAF's middleman. A node can be stopped (its whole actor system torn down).
// Timeouts are short; tests never depend on them. Every wait is bounded.

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <vector>

#include "actors/controller/broker_lifecycle_actor.hpp"
#include "actors/controller/controller_actor.hpp"
#include "actors/controller/controller_codec.hpp"
#include "actors/controller/quorum_actor.hpp"
#include "actors/replica/node_endpoint_actor.hpp"
#include "actors/replica/replica_manager_actor.hpp"
#include "tests/support/caf_fixture.hpp"
#include "tests/support/temp_dir.hpp"

namespace capstan::test {

struct controller_harness_options {
  int nodes = 3;
  std::chrono::milliseconds session_timeout{3000};
  std::chrono::milliseconds heartbeat_interval{200};
  int32_t min_insync_replicas = 1;
  // replica.lag.time.max.ms of every leader.
  int64_t replica_lag_time_max_ms = 30000;
};

struct controller_node {
  node_id id{0};
  std::filesystem::path data_dir;
  std::unique_ptr<threaded_system> system;
  std::shared_ptr<routing_registry> routes;
  std::shared_ptr<offline_replica_registry> offline = std::make_shared<offline_replica_registry>();
  std::shared_ptr<leaderless_replica_registry> leaderless =
      std::make_shared<leaderless_replica_registry>();
  controller::incarnation_id incarnation{};
  peer_directory_actor directory;
  quorum_actor quorum;
  controller_actor controller;
  replica_manager_actor replicas;
  node_endpoint_actor endpoint;
  broker_lifecycle_actor lifecycle;
  uint16_t port = 0;
};

class controller_harness {
public:
  static constexpr const char* cluster_id = "controller-harness";

  explicit controller_harness(controller_harness_options options);
  ~controller_harness();
  controller_harness(const controller_harness&) = delete;
  controller_harness& operator=(const controller_harness&) = delete;

  controller_node& node(int id) { return *nodes_.at(static_cast<size_t>(id - 1)); }
  bool running(int id) const { return nodes_.at(static_cast<size_t>(id - 1))->system != nullptr; }
  // Tears node `id`'s actor system down: its quorum member, controller, replicas and heartbeats
  // all stop.
  void stop(int id);
  // Stops node `id` as a stopping node does: its controlled shutdown first, then stop(id). True
  // iff the active controller confirmed the shutdown.
  bool shut_down(int id);

  // The running node whose quorum member leads in the highest term, 0 if none.
  int quorum_leader();
  // The committed metadata image of node `id`'s quorum member.
  caf::expected<controller::metadata_image> image(int id);
  // The image of the quorum leader once `pred` holds for it (bounded); fails the test otherwise.
  controller::metadata_image
  await_image(const std::function<bool(const controller::metadata_image&)>& pred);

  // Creates a topic through the active controller, as a node would: asks the running voters,
  // following NOT_CONTROLLER, until one answers otherwise (bounded). Returns that answer.
  topic_response_msg create_topic(const topic_spec& spec);
  // CreatePartitions and ElectLeaders through the active controller, as create_topic.
  topic_response_msg create_partitions(const create_partitions_msg& request);
  elect_leaders_response_msg elect_leaders(const elect_leaders_msg& request);
  // Asks for a block of producer ids for node `for_node` as its controller client would: the
  // running voters in turn, following NOT_CONTROLLER, until one answers otherwise (bounded).
  allocate_producer_ids_response_msg allocate_producer_ids(int for_node);
  // A registration sent to node `via`'s endpoint.
  broker_registration_response_msg register_at(int via,
                                               const controller::broker_registration_request& r);
  // node `id`'s registration as its lifecycle sends it, with another incarnation id.
  controller::broker_registration_request registration_of(int id, uint8_t incarnation);

  partition_replica_actor replica(int node, const topic_partition& tp);
  bool hosts(int node, const topic_partition& tp);
  caf::expected<produce_result> produce(int node, const topic_partition& tp, bytes batch,
                                        int16_t acks = -1);
  // A consumer's fetch at node `node` from `from`, answered at once (no wait).
  caf::expected<fetch_result> fetch(int node, const topic_partition& tp, offset from);
  caf::expected<replica_status> status(int node, const topic_partition& tp);

  bool eventually(const std::function<bool()>& pred,
                  std::chrono::milliseconds limit = std::chrono::seconds(30));

private:
  controller_harness_options opts_;
  temp_dir dir_{"controller"};
  std::vector<std::unique_ptr<controller_node>> nodes_;
};

} // namespace capstan::test
