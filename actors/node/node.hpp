#pragma once

// A capstan node in one process: actor system, metadata (controller quorum of one by default),
// replica manager, group coordinator, client RPC server and metrics endpoint. `capstan node` runs
// one; in-process tests start several.

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actors/gateway/rpc_limits.hpp"
#include "actors/group/group_membership.hpp"
#include "actors/replica/replica_fetcher_config.hpp"
#include "runtime/cluster/broker_config_entry.hpp"
#include "runtime/cluster/topic_validation.hpp"
#include "runtime/result.hpp"
#include "runtime/storage/log_config.hpp"

namespace capstan {

struct node_config {
  int32_t node_id = 1;
  std::filesystem::path data_dir = "./capstan-data";
  // host:port; port 0 picks a free one (tests).
  std::string listen = "127.0.0.1:9192";          // client RPC
  std::string cluster_listen = "127.0.0.1:9193";  // CAF middleman
  std::string metrics_listen = "127.0.0.1:9194";  // Prometheus text over HTTP
  // The Kafka wire protocol listener (docs/kafka.md); empty: none.
  std::string kafka_listen = "127.0.0.1:9092";
  // host:port Kafka clients are told to reach this node at (advertised.listeners); empty: the
  // Kafka listener's host and bound port.
  std::string kafka_advertised;
  // ID@HOST:PORT,... (controller_quorum.hpp); empty, or this node alone: a single-node cluster.
  // Otherwise a node whose id is a voter runs a quorum member and the controller beside its
  // broker; any other node is a broker only.
  std::string controller_quorum;
  // process.roles (controller_quorum.hpp); empty: "broker,controller" for a node
  // controller_quorum names, "broker" for any other. "broker,controller" on a node it does not
  // name runs a quorum member that `cluster add-voter` can make a voter.
  std::string process_roles;
  // cluster.id the data dir must belong to; empty: whatever its meta.properties says (a new
  // random id on first start of a single-node cluster; a node of a multi-node quorum needs it to
  // create its data dir).
  std::string cluster_id;
  // The controller quorum (Kafka's names and defaults): how often a node heartbeats the active
  // controller, how long the controller waits for a heartbeat before it fences the node, and
  // how long a quorum follower waits for its leader before it starts an election.
  int64_t broker_heartbeat_interval_ms = 2000;          // broker.heartbeat.interval.ms
  int64_t broker_session_timeout_ms = 9000;             // broker.session.timeout.ms
  int64_t controller_quorum_election_timeout_ms = 1000; // controller.quorum.election.timeout.ms
  // The active controller's periodic preferred leader election (Kafka's names and defaults).
  bool auto_leader_rebalance_enable = true;             // auto.leader.rebalance.enable
  int64_t leader_imbalance_check_interval_seconds = 300; // leader.imbalance.check.interval.seconds
  int32_t leader_imbalance_per_broker_percentage = 10;  // leader.imbalance.per.broker.percentage
  // Broker defaults for topic configs (log.* names map to the topic names).
  log_config log_defaults;
  int32_t min_insync_replicas = 1;
  int32_t default_partitions = 1;           // num.partitions
  int16_t default_replication_factor = 1;   // default.replication.factor
  int32_t offsets_topic_partitions = 1;     // offsets.topic.num.partitions (50 in Kafka)
  int16_t offsets_topic_replication_factor = 3; // offsets.topic.replication.factor
  // group.min.session.timeout.ms, group.max.session.timeout.ms, group.initial.rebalance.delay.ms,
  // group.max.size (Kafka's names and defaults).
  group_limits group_membership_limits;
  int32_t offsets_retention_minutes = 10080;          // offsets.retention.minutes
  int32_t offsets_retention_check_interval_ms = 600000; // offsets.retention.check.interval.ms
  // max.broker.partitions (capstan's own): partition replicas one node may host; by default what
  // its open-file limit can hold (default_max_broker_partitions()).
  int32_t max_broker_partitions = default_max_broker_partitions();
  int64_t checkpoint_interval_ms = 60000;   // log.flush.offset.checkpoint.interval.ms
  size_t scheduler_threads = 2;
  // actor.scheduler.policy (capstan's own): true for CAF's sharing policy, false for work-stealing.
  bool scheduler_sharing = false;
  // num.log.io.workers (capstan's own): the I/O workers that run the partition logs' blocking
  // file work and recovery, shared by every partition of the node.
  int32_t io_workers = 2;
  // Bounds on client connections (docs/configuration.md, "Client connections"); max.connections
  // defaults to half the open-file limit when the config is made.
  rpc_limits client_limits = default_node_rpc_limits();
  // Replication (docs/configuration.md, "Replication"): how long a follower may lag before its
  // leader drops it from the ISR, and how this node's followers fetch.
  int64_t replica_lag_time_max_ms = 30000;  // replica.lag.time.max.ms
  int32_t num_replica_fetchers = 1;         // num.replica.fetchers
  replica_fetcher_config replica_fetcher;   // replica.fetch.*, replica.socket.timeout.ms
  // fault.injection.enable (capstan's own, after Redpanda's): the injectFault call may cut this
  // node off from peers, drop produce responses, lose or delay control messages, or fill its
  // disk through the storage env the node then installs (docs/operations.md). Off: it is
  // refused, and no storage env is installed.
  bool fault_injection_enable = false;
  // The keys given in the config file or by a command-line flag (from_toml and the node command
  // record them): DescribeConfigs shows them, and their synonyms, as STATIC_BROKER_CONFIG.
  std::set<std::string> given_keys;

  // Applies a TOML file's keys (Kafka names, e.g. node.id, log.dirs, listeners ...); unknown keys
  // are INVALID_CONFIG naming the key (docs/configuration.md lists them).
  static result<node_config> from_toml_file(const std::filesystem::path& file, node_config base);
  // The same for TOML text; `source` names it in error messages as the file name does.
  static result<node_config> from_toml(std::string_view text, const std::string& source,
                                       node_config base);
  // Every TOML key the two above take (each synonym and coarser unit on its own), as
  // docs/configuration.md must list them.
  static std::set<std::string> known_keys();
  // Every key known_keys names with its value as Kafka shows it (numbers and booleans printed,
  // lists comma-joined) and its source: STATIC_BROKER_CONFIG where given_keys holds the key or a
  // synonym of it (broker.id for node.id, log.retention.hours for log.retention.ms ...),
  // DEFAULT_CONFIG otherwise. Sorted by name. What a Kafka DescribeConfigs of this node answers.
  std::vector<broker_config_entry> broker_configs() const;
};

class node {
public:
  // Starts everything; returns once the RPC server listens and every partition log is open.
  // Errors: a data dir in use (lock held), of another node id or cluster, unusable listen address.
  static result<std::unique_ptr<node>> start(const node_config& config);
  // Stops accepting, fails in-flight requests, flushes, writes checkpoints. Idempotent.
  void stop();
  // Why the cluster refuses this node for good, once it does: INCONSISTENT_CLUSTER_ID, or a
  // DUPLICATE_BROKER_REGISTRATION that outlasted any predecessor's session (docs/operations.md,
  // "Refused nodes"). The node serves on, but is no member of the cluster: stop it.
  std::optional<error> refusal() const;
  // Why this node must stop on its own account, once it must: its controller quorum member could
  // not write its Raft files (KAFKA_STORAGE_ERROR), as Kafka's broker halts when its metadata log
  // dir fails (docs/operations.md, "After a fault"). Stop it; it then
  // leaves no clean-shutdown marker.
  std::optional<error> failure() const;
  ~node();

  node(const node&) = delete;
  node& operator=(const node&) = delete;

  uint16_t rpc_port() const;
  // The Kafka listener's bound port; 0 without one.
  uint16_t kafka_port() const;
  uint16_t metrics_port() const;
  uint16_t cluster_port() const;

  struct impl;

private:
  explicit node(std::unique_ptr<impl> impl);
  std::unique_ptr<impl> impl_;
};

} // namespace capstan
