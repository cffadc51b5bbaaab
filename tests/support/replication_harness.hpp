#pragma once

// Several capstan nodes in one process, one actor system each, joined over 127.0.0.1 by CAF's
// middleman: every node runs a replica manager (with its peer directory and fetchers) behind a
// published node endpoint, as a real node does. A test_controller in its own actor system plays
// the controller quorum: it sends LeaderAndIsr / UpdateMetadata / StopReplica frames and answers
// leaders' AlterPartition, so every role change and ISR change crosses the wire as a real one
// would. Faults come from link_faults.

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "actors/replica/node_endpoint_actor.hpp"
#include "actors/replica/replica_manager_actor.hpp"
#include "tests/support/caf_fixture.hpp"
#include "tests/support/log_builder.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/test_controller.hpp"

namespace capstan::test {

struct harness_options {
  int nodes = 3;
  int32_t min_insync_replicas = 1;
  int64_t replica_lag_time_max_ms = 30000;
  replica_fetcher_config fetcher = fast_fetcher_config();

  static replica_fetcher_config fast_fetcher_config();
};

struct harness_node {
  node_id id{0};
  std::filesystem::path data_dir;
  std::unique_ptr<threaded_system> system;
  std::shared_ptr<routing_registry> routes;
  // The controller's UpdateMetadata as this node accepted it (null before the first).
  std::shared_ptr<metadata_cache_registry> metadata;
  replica_manager_actor replicas;
  node_endpoint_actor endpoint;
  uint16_t port = 0;
};

class replication_harness {
public:
  explicit replication_harness(harness_options options);
  ~replication_harness();
  replication_harness(const replication_harness&) = delete;
  replication_harness& operator=(const replication_harness&) = delete;

  harness_node& node(int id) { return *nodes_.at(id - 1); }

  // Topic configs (min.insync.replicas, ...) the controller publishes with UpdateMetadata.
  void topic(const std::string& name, std::map<std::string, std::string> configs);

  // The controller's LeaderAndIsr for `tp` to every replica (or only to `send_to`): the leader
  // leads, the others follow it (opening their replica from disk first if needed).
  void elect(const topic_partition& tp, int leader, int32_t epoch, std::vector<int> replicas,
             std::vector<int> isr, std::vector<int> send_to = {});
  // The same, returning what the nodes refused instead of failing the test.
  std::vector<partition_error_msg> try_elect(const topic_partition& tp, int leader, int32_t epoch,
                                             std::vector<int> replicas, std::vector<int> isr,
                                             std::vector<int> send_to = {});
  // The same from another controller at `controller_epoch`, connected to every node for it
  // (an old controller that lost its seat and still sends).
  std::vector<partition_error_msg> try_elect_as(int32_t controller_epoch, const topic_partition& tp,
                                                int leader, int32_t epoch, std::vector<int> replicas,
                                                std::vector<int> isr);
  // StopReplica for `tp` on `node`, keeping its files (the node's copy goes down).
  void stop(int node, const topic_partition& tp);
  // The committed state again, to `node` only (a stopped copy comes back as it would after a
  // restart: the controller tells it its role).
  void rejoin(int node, const topic_partition& tp);
  // What the controller has committed for `tp` (its ISR moves with AlterPartition).
  partition_state_msg committed(const topic_partition& tp);

  partition_replica_actor replica(int node, const topic_partition& tp);
  caf::expected<produce_result> produce(int node, const topic_partition& tp, bytes batch,
                                        int16_t acks = -1, int32_t timeout_ms = 30000);
  caf::expected<replica_status> status(int node, const topic_partition& tp);
  // Every record in the replica's segment files (all of it, not only below the HW).
  std::vector<read_record> log_records(int node, const topic_partition& tp);
  // Consumer view: records below the HW, read with fetch requests.
  std::vector<read_record> consumed(int node, const topic_partition& tp);

  // Waits (bounded) until `pred` holds; false on timeout.
  bool eventually(const std::function<bool()>& pred,
                  std::chrono::milliseconds limit = std::chrono::seconds(20));

private:
  void connect_nodes(const test_controller_actor& controller);
  std::vector<partition_error_msg> send_election(const test_controller_actor& controller,
                                                 const election& e);

  harness_options opts_;
  temp_dir dir_{"replication"};
  std::vector<std::unique_ptr<harness_node>> nodes_;
  std::unique_ptr<threaded_system> controller_system_;
  test_controller_actor controller_;
};

} // namespace capstan::test
