#pragma once

// Several capstan nodes' replication actors in one process, one actor system each, joined over
// 127.0.0.1 by CAF's middleman: every node publishes its node endpoint and finds the others
// through its peer directory, so fetch sessions, Fetch and OffsetsForLeaderEpoch go over the
// wire exactly as between machines. The test plays the controller: it hands replicas their roles
// and fetchers their partitions (what LeaderAndIsr does on a node), and cuts or delays links with
// link_faults.

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/replica/fetcher_manager_actor.hpp"
#include "actors/replica/node_endpoint_actor.hpp"
#include "actors/replica/partition_replica_actor.hpp"
#include "actors/replica/replica_manager_actor.hpp"
#include "tests/support/caf_fixture.hpp"
#include "tests/support/log_builder.hpp"
#include "tests/support/temp_dir.hpp"

namespace capstan::test {

struct harness_node {
  node_id id{0};
  std::filesystem::path data_dir;
  std::unique_ptr<threaded_system> system;
  std::shared_ptr<routing_registry> routes;
  node_endpoint_actor endpoint;
  uint16_t port = 0;
  peer_directory_actor peers;
  fetcher_manager_actor fetchers;
  std::map<topic_partition, partition_replica_actor> replicas;
};

class replication_harness {
public:
  // `nodes` nodes with ids 1..nodes. Fetchers use `config` (short backoffs by default).
  explicit replication_harness(int nodes, replica_fetcher_config config = fast_fetcher_config());
  ~replication_harness();
  replication_harness(const replication_harness&) = delete;
  replication_harness& operator=(const replication_harness&) = delete;

  static replica_fetcher_config fast_fetcher_config();

  harness_node& node(int id) { return *nodes_.at(id - 1); }

  // Opens the replica of `tp` on `node` (its log under the node's data dir).
  partition_replica_actor open(int node, const topic_partition& tp, int32_t min_insync_replicas = 1,
                               int64_t replica_lag_time_max_ms = 30000);
  // Closes the replica of `tp` on `node` (as a node stop would), keeping its files.
  void close(int node, const topic_partition& tp);

  // What LeaderAndIsr does on each node: the leader becomes leader; every other replica
  // becomes a follower and its fetcher starts (truncating by epoch first).
  void elect(const topic_partition& tp, int leader, int32_t epoch, std::vector<int> replicas,
             std::vector<int> isr);
  // A single node's part of the same.
  void become_leader(int node, const topic_partition& tp, int32_t epoch, std::vector<int> replicas,
                     std::vector<int> isr);
  void become_follower(int node, const topic_partition& tp, int leader, int32_t epoch,
                       std::vector<int> replicas);
  void stop_fetching(int node, const topic_partition& tp);

  caf::expected<produce_result> produce(int node, const topic_partition& tp, bytes batch,
                                        int16_t acks = -1, int32_t timeout_ms = 30000);
  caf::expected<replica_status> status(int node, const topic_partition& tp);
  // Every record in the replica's log (all of it, not only below the HW).
  std::vector<read_record> log_records(int node, const topic_partition& tp);
  // Consumer view: records below the HW, read with fetch requests.
  std::vector<read_record> consumed(int node, const topic_partition& tp);

  // Waits (bounded) until `pred` holds; false on timeout.
  bool eventually(const std::function<bool()>& pred,
                  std::chrono::milliseconds limit = std::chrono::seconds(20));

private:
  temp_dir dir_{"replication"};
  replica_fetcher_config config_;
  std::vector<std::unique_ptr<harness_node>> nodes_;
};

} // namespace capstan::test
