#pragma once

// The Capstan::Server behind one client connection (schema/client.capnp, docs/protocol.md).
//
// Threads: everything here runs on the RPC server's kj thread, except the CAF side of a call,
// which runs in the bridge actor (rpc_bridge.hpp) and completes the call through a cross-thread
// fulfiller. Nothing here blocks.

#include <chrono>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include <kj/async-io.h>

#include "actors/gateway/connection_stream.hpp"
#include "actors/gateway/parked_fetch_limiter.hpp"
#include "actors/gateway/rpc_bridge.hpp"
#include "actors/gateway/rpc_limits.hpp"
#include "actors/gateway/rpc_server.hpp"
#include "schema/client.capnp.h"

namespace capstan {

class metrics_registry;
class metric_counter;
class metric_gauge;
class metric_histogram;

// What one connection's calls will still add to its unsent answers: calls in flight (parked
// fetches aside, they have their own caps) and the most their fetch answers can carry. The read
// gate adds what Cap'n Proto has queued to send. Used on the kj thread only.
struct connection_load {
  int64_t calls = 0;
  int64_t fetch_bytes = 0;
};

// Metric series the server updates, resolved once (empty when the server has no registry).
struct gateway_metrics {
  std::shared_ptr<metrics_registry> registry;
  metric_counter* bytes_in = nullptr;
  metric_counter* bytes_out = nullptr;
  metric_histogram* produce_latency = nullptr;
  metric_histogram* fetch_latency = nullptr;
  metric_counter* connections = nullptr;
  metric_gauge* open_connections = nullptr;
  // capstan_rpc_connections_refused_total{limit}: over max.connections, over
  // max.connections.per.ip.
  metric_counter* refused_max_connections = nullptr;
  metric_counter* refused_max_connections_per_ip = nullptr;
  metric_counter* accept_errors = nullptr;
  metric_gauge* parked_fetches = nullptr;
  metric_counter* fetches_not_parked = nullptr;
  metric_counter* bridge_restarts = nullptr;
  // capstan_rpc_requests_total per method, resolved once so counting takes no lock.
  std::vector<std::pair<const char*, metric_counter*>> requests;

  explicit gateway_metrics(std::shared_ptr<metrics_registry> r);
  // capstan_rpc_requests_total{method}.
  void count_request(const char* method) const;
  // capstan_rpc_errors_total{method,code}.
  void count_error(const char* method, errc code) const;
};

// State shared by every connection's service; outlives in-flight calls (held by shared_ptr).
// Used on the kj thread, except the bridge (any thread).
struct service_context {
  service_context(caf::actor_system& sys, rpc_targets t, rpc_limits l);
  service_context(const service_context&) = delete;
  service_context& operator=(const service_context&) = delete;

  rpc_targets targets;
  gateway_metrics metrics;
  rpc_limits limits;
  // Issues CAF requests for the kj thread.
  rpc_bridge bridge;
  // Fetches that may park, per connection and on the node.
  parked_fetch_limiter parked_fetches;
  // Calls in flight on every connection together (queued.max.requests); kj thread only.
  int64_t calls_in_flight = 0;
  // The kj loop's timer, for the calls' deadlines; set by the RPC server's kj thread before it
  // serves and used only there.
  kj::Timer* timer = nullptr;
  // Added to a call's own timeout (produce timeoutMs, fetch maxWaitMs) before the gateway gives up
  // waiting for the actor and answers REQUEST_TIMED_OUT.
  std::chrono::milliseconds reply_margin{5000};
  // Bound on metadata, topic admin and group calls.
  std::chrono::milliseconds admin_timeout{30000};
};

class capstan_service final : public rpc::Capstan::Server {
public:
  // `pins` and `load`: the connection's, shared with its connection_stream and its read gate.
  capstan_service(std::shared_ptr<service_context> ctx, std::shared_ptr<fetch_pins> pins,
                  std::shared_ptr<connection_load> load);

  kj::Promise<void> metadata(MetadataContext call) override;
  kj::Promise<void> createTopic(CreateTopicContext call) override;
  kj::Promise<void> deleteTopic(DeleteTopicContext call) override;
  kj::Promise<void> listTopics(ListTopicsContext call) override;
  kj::Promise<void> describeConfigs(DescribeConfigsContext call) override;
  kj::Promise<void> alterConfigs(AlterConfigsContext call) override;
  kj::Promise<void> produce(ProduceContext call) override;
  kj::Promise<void> fetch(FetchContext call) override;
  kj::Promise<void> listOffsets(ListOffsetsContext call) override;
  kj::Promise<void> commitOffsets(CommitOffsetsContext call) override;
  kj::Promise<void> fetchOffsets(FetchOffsetsContext call) override;
  kj::Promise<void> describeCluster(DescribeClusterContext call) override;
  kj::Promise<void> initProducerId(InitProducerIdContext call) override;
  kj::Promise<void> createPartitions(CreatePartitionsContext call) override;
  kj::Promise<void> electLeaders(ElectLeadersContext call) override;
  kj::Promise<void> reassignPartitions(ReassignPartitionsContext call) override;
  kj::Promise<void> unregisterNode(UnregisterNodeContext call) override;
  kj::Promise<void> findCoordinator(FindCoordinatorContext call) override;
  kj::Promise<void> listGroups(ListGroupsContext call) override;
  kj::Promise<void> joinGroup(JoinGroupContext call) override;
  kj::Promise<void> syncGroup(SyncGroupContext call) override;
  kj::Promise<void> heartbeat(HeartbeatContext call) override;
  kj::Promise<void> leaveGroup(LeaveGroupContext call) override;
  kj::Promise<void> describeGroup(DescribeGroupContext call) override;
  kj::Promise<void> deleteGroup(DeleteGroupContext call) override;
  kj::Promise<void> injectFault(InjectFaultContext call) override;

private:
  // Counts `call` in the connection's load, and unless `parked` in the node's calls in flight,
  // until it completes or is cancelled; `fetch_bytes` is the most a fetch's answer can carry (0
  // for other calls and parked fetches).
  kj::Promise<void> answered_later(kj::Promise<void> call, int64_t fetch_bytes = 0,
                                   bool parked = false);

  std::shared_ptr<service_context> ctx_;
  std::shared_ptr<fetch_pins> pins_;
  std::shared_ptr<connection_load> load_;
  // This connection's fetches that may park (shared with their in-flight calls).
  std::shared_ptr<parked_fetch_limiter::connection_count> parked_;
};

} // namespace capstan
