#pragma once

// The client library's connection to a capstan cluster: Cap'n Proto RPC to each broker on one
// kj event-loop thread owned by the client, a metadata cache, and every request routed to the
// partition leader. NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION and, for a partition with
// more than one replica, KAFKA_STORAGE_ERROR (the controller moves a leadership off a failed
// disk) are retried after a metadata refresh until delivery.timeout.ms. Blocking calls may be made from any thread except
// the client's own (callbacks run there).

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/client/client_config.hpp"
#include "runtime/cluster/cluster_description.hpp"
#include "runtime/cluster/metadata.hpp"
#include "runtime/group/group_messages.hpp"
#include "runtime/result.hpp"
#include "runtime/types.hpp"

namespace capstan::client {

struct produce_response {
  offset base_offset{0};
  timestamp_ms log_append_time = no_timestamp;
  offset log_start{0};
};

struct fetch_response {
  offset high_watermark{0};
  offset log_start{0};
  bytes records; // padded batch sequence (docs/formats.md)
  // The log no longer holds what the caller read after its last fetched epoch (KIP-320): the
  // leader's last epoch up to it, and where that epoch ends; no records then. Epoch -1: none.
  leader_epoch diverging_epoch{-1};
  offset diverging_end{-1};
};

// An idempotent producer's identity from initProducerId (docs/idempotence.md).
struct producer_identity {
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
};

struct committed_offset {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = -1;
  std::string metadata;
  errc error = errc::none;
  // The partition leader epoch of the last record read before `offset` (-1: unknown).
  int32_t leader_epoch = -1;
};

// One partition's outcome of elect_leaders (none: its preferred replica was elected) or of
// reassign_partitions (none: its reassignment started, or was cancelled).
struct election_result {
  std::string topic;
  int32_t partition = 0;
  errc error = errc::none;
  std::string message;
};
// One partition of reassign_partitions: its target replicas (the first the preferred leader);
// empty: cancel the reassignment it runs.
struct reassignment_request {
  std::string topic;
  int32_t partition = 0;
  std::vector<int32_t> replicas;
};

// The faults injectFault sets on a node (schema/client.capnp, docs/operations.md).
enum class fault_kind {
  clear,
  isolate,
  drop_outgoing,
  drop_incoming,
  drop_produce_responses,
  drop_control,
  delay_control,
  disk_full,
  disk_read_only,
  disk_io_error
};

// One injectFault call; each kind reads only its own fields (the disk faults none, and refuse
// any).
struct fault_request {
  fault_kind kind = fault_kind::clear;
  std::vector<int32_t> peers; // isolate, drop_outgoing, drop_incoming
  int32_t count = 0;          // drop_produce_responses, drop_control
  double probability = 0;     // drop_control
  int32_t delay_ms = 0;       // delay_control
};

class cluster_client {
public:
  // Connects to the first bootstrap address that answers a metadata request.
  static result<std::unique_ptr<cluster_client>> connect(const client_config& config);
  virtual ~cluster_client() = default;

  // Admin (blocking)
  virtual result<cluster_metadata> metadata(const std::vector<std::string>& topics = {}) = 0;
  virtual result<topic_metadata> create_topic(const topic_spec& spec) = 0;
  virtual status delete_topic(const std::string& name) = 0;
  virtual result<std::vector<std::string>> list_topics() = 0;
  virtual result<std::map<std::string, std::string>> describe_configs(const std::string& topic) = 0;
  // Kafka's IncrementalAlterConfigs: sets `configs` and removes the overrides of the `deleted`
  // keys (the nodes' defaults apply to them again).
  virtual status alter_configs(const std::string& topic,
                               const std::map<std::string, std::string>& configs,
                               const std::vector<std::string>& deleted) = 0;
  // Kafka's CreatePartitions: grows `topic` to `total` partitions. Producers see the new ones
  // after their next metadata refresh.
  virtual status create_partitions(const std::string& topic, int32_t total) = 0;
  // Kafka's preferred ElectLeaders for these (topic, partition) pairs; none: every partition.
  virtual result<std::vector<election_result>>
  elect_leaders(const std::vector<std::pair<std::string, int32_t>>& partitions) = 0;
  // Kafka's AlterPartitionReassignments (schema/client.capnp, reassignPartitions): each
  // partition's replicas move to its target's; an empty target cancels its reassignment.
  virtual result<std::vector<election_result>>
  reassign_partitions(const std::vector<reassignment_request>& partitions) = 0;
  // Kafka's UnregisterBroker (schema/client.capnp, unregisterNode): a fenced node gone for good
  // leaves the cluster's metadata.
  virtual status unregister_node(int32_t node) = 0;
  // KIP-853's AddRaftVoter (schema/client.capnp, addVoter): node `node`, which runs a quorum
  // member whose cluster listener is `endpoint` (HOST:PORT), becomes a controller quorum voter.
  // Returns once the new voter set committed.
  virtual status add_voter(int32_t node, const std::string& endpoint) = 0;
  // KIP-853's RemoveRaftVoter (schema/client.capnp, removeVoter): node `node` stops being a voter.
  virtual status remove_voter(int32_t node) = 0;
  // The controller quorum as the connected node finds it (schema/client.capnp, describeCluster).
  virtual result<cluster_description> describe_cluster() = 0;
  // Sets the fault switch of the node this client bootstrapped from (the admin node).
  // POLICY_VIOLATION unless the node runs with fault.injection.enable.
  virtual status inject_fault(const fault_request& fault) = 0;
  // Kafka's InitProducerId without a transactional id: a producer id no other call got, on any
  // node of the cluster, with epoch 0.
  virtual result<producer_identity> init_producer_id() = 0;

  // Data (asynchronous; `done` runs on the client thread, never blocks it). The batch is shared
  // and never changed, so a caller that sends it again (an idempotent retry) copies no bytes.
  virtual void produce(const std::string& topic, int32_t partition, int16_t acks,
                       std::shared_ptr<const bytes> batch,
                       std::function<void(result<produce_response>)> done) = 0;
  // Retriable errors are retried for request.timeout.ms + max_wait_ms, but no retry starts after
  // `retry_until`: a caller with a bound of its own (a consumer's poll timeout) hears the last
  // error by then instead of request.timeout.ms later. `last_fetched_epoch`: the partition leader
  // epoch of the batch the caller read last (-1: none), for the leader's truncation check.
  virtual void fetch(const std::string& topic, int32_t partition, offset from,
                     leader_epoch last_fetched_epoch, int32_t max_bytes, int32_t min_bytes,
                     int32_t max_wait_ms,
                     std::chrono::steady_clock::time_point retry_until,
                     std::function<void(result<fetch_response>)> done) = 0;

  // Blocking forms of the above and the rest.
  result<produce_response> produce_sync(const std::string& topic, int32_t partition, int16_t acks,
                                        bytes batch);
  result<fetch_response> fetch_sync(const std::string& topic, int32_t partition, offset from,
                                    int32_t max_bytes, int32_t min_bytes, int32_t max_wait_ms);
  // timestamp: earliest (-2), latest (-1) or a time; -1 offset when none.
  virtual result<int64_t> list_offsets(const std::string& topic, int32_t partition,
                                       int64_t timestamp) = 0;
  // `member`: the committing group member; none (generation -1) for a consumer outside the
  // group's membership, which only a group without members accepts.
  virtual result<std::vector<committed_offset>>
  commit_offsets(const std::string& group, const std::vector<committed_offset>& offsets,
                 const group_member_ref& member) = 0;
  virtual result<std::vector<committed_offset>>
  fetch_offsets(const std::string& group,
                const std::vector<std::pair<std::string, int32_t>>& partitions) = 0;
  // The cluster's groups with committed offsets, sorted: every live node's listGroups, merged.
  virtual result<std::vector<std::string>> list_groups() = 0;

  // Kafka's classic group protocol at `group`'s coordinator (docs/groups.md, "Membership"), found
  // and found again as for commits. The group's own answers (MEMBER_ID_REQUIRED,
  // REBALANCE_IN_PROGRESS, ...) come in the response; the result fails when no coordinator
  // answered in time: request.timeout.ms, plus the rebalance timeout for a join.
  virtual result<join_group_response> join_group(const std::string& group,
                                                 const join_group_request& req) = 0;
  virtual result<sync_group_response> sync_group(const std::string& group,
                                                 const sync_group_request& req) = 0;
  // These fail with the group's error (REBALANCE_IN_PROGRESS: join again).
  virtual status heartbeat(const std::string& group, const group_member_ref& member) = 0;
  virtual status leave_group(const std::string& group, const group_member_ref& member) = 0;
  // The group as its coordinator describes it (Kafka's DescribeGroups).
  virtual result<group_summary> describe_group(const std::string& group) = 0;
  // Kafka's DeleteGroups for one group: its commits and record go (GROUP_NOT_EMPTY while it has
  // members, GROUP_ID_NOT_FOUND when there is nothing to delete).
  virtual status delete_group(const std::string& group) = 0;

  const client_config& config() const { return config_; }

protected:
  explicit cluster_client(client_config config) : config_(std::move(config)) {}

  // True on the thread that runs this client's calls and callbacks (none here), whose work every
  // answer needs.
  virtual bool on_client_thread() const { return false; }

  // Starts a call with `start(done)` and waits for what `done` is given: every blocking form goes
  // through here. On the client's own thread (from a callback) it would wait for itself:
  // INVALID_REQUEST at once instead.
  template <class T>
  result<T> await(const std::function<void(std::function<void(result<T>)>)>& start) {
    if (on_client_thread())
      return make_error(errc::invalid_request,
                        "a blocking client call from a callback (the client's own thread) would "
                        "wait for itself");
    auto p = std::make_shared<std::promise<result<T>>>();
    auto f = p->get_future();
    start([p](result<T> r) { p->set_value(std::move(r)); });
    return f.get();
  }

  client_config config_;
};

} // namespace capstan::client
