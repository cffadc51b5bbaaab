#pragma once

// The Capstan::Server behind one client connection (schema/client.capnp, docs/protocol.md), and
// the connection stream that keeps zero-copy fetch data alive until it is written.
//
// Threads: everything here runs on the RPC server's kj thread, except the CAF side of a call,
// which runs in the bridge actor (capstan_service.cpp) and completes the call through a
// cross-thread fulfiller. Nothing here blocks.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include <caf/actor.hpp>
#include <kj/async-io.h>

#include "actors/gateway/rpc_server.hpp"
#include "schema/client.capnp.h"

namespace capstan {

class metrics_registry;
class metric_counter;
class metric_histogram;

// Owners of log bytes that fetch responses of one connection refer to, keyed by the bytes'
// address. A fetch response refers to log bytes without copying them
// (Orphanage::referenceExternalData), and Cap'n Proto writes the response after the call has
// returned, with no hook telling when; so the service pins the owner here and the connection's
// pinning_stream releases it once the write whose pieces start at those bytes completes. A
// response that is never written (the client cancelled the call) stays pinned until the
// connection closes. Used on the kj thread only.
struct fetch_pins {
  std::multimap<const void*, std::shared_ptr<const void>> owners;
};

// A connection's stream, releasing fetch pins as their responses are written.
class pinning_stream final : public kj::AsyncIoStream {
public:
  pinning_stream(kj::Own<kj::AsyncIoStream> inner, std::shared_ptr<fetch_pins> pins)
      : inner_(kj::mv(inner)), pins_(std::move(pins)) {}
  pinning_stream(const pinning_stream&) = delete;
  pinning_stream& operator=(const pinning_stream&) = delete;
  ~pinning_stream() = default;

  kj::Promise<size_t> tryRead(void* buffer, size_t min_bytes, size_t max_bytes) override;
  kj::Promise<void> write(const void* buffer, size_t size) override;
  kj::Promise<void> write(kj::ArrayPtr<const kj::ArrayPtr<const kj::byte>> pieces) override;
  kj::Promise<void> whenWriteDisconnected() override;
  void shutdownWrite() override;
  void abortRead() override;

private:
  kj::Own<kj::AsyncIoStream> inner_;
  std::shared_ptr<fetch_pins> pins_;
};

// Metric series the server updates, resolved once (empty when the server has no registry).
struct gateway_metrics {
  std::shared_ptr<metrics_registry> registry;
  metric_counter* bytes_in = nullptr;
  metric_counter* bytes_out = nullptr;
  metric_histogram* produce_latency = nullptr;
  metric_histogram* fetch_latency = nullptr;
  metric_counter* connections = nullptr;
  // capstan_rpc_requests_total per method, resolved once so counting takes no lock.
  std::vector<std::pair<const char*, metric_counter*>> requests;

  explicit gateway_metrics(std::shared_ptr<metrics_registry> r);
  // capstan_rpc_requests_total{method}.
  void count_request(const char* method) const;
  // capstan_rpc_errors_total{method,code}.
  void count_error(const char* method, errc code) const;
};

// State shared by every connection's service; outlives in-flight calls (held by shared_ptr).
struct service_context {
  caf::actor bridge; // issues CAF requests for the kj thread (capstan_service.cpp)
  rpc_targets targets;
  gateway_metrics metrics;
  // Added to a call's own timeout (produce timeoutMs, fetch maxWaitMs) before the gateway gives up
  // waiting for the actor and answers REQUEST_TIMED_OUT.
  std::chrono::milliseconds reply_margin{5000};
  // Bound on metadata, topic admin and group calls.
  std::chrono::milliseconds admin_timeout{30000};
};

// Spawns the bridge actor. The caller must send it an exit message when the server stops.
caf::actor spawn_rpc_bridge(caf::actor_system& sys);

class capstan_service final : public rpc::Capstan::Server {
public:
  // `pins`: the connection's, shared with its pinning_stream.
  capstan_service(std::shared_ptr<service_context> ctx, std::shared_ptr<fetch_pins> pins);

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

private:
  std::shared_ptr<service_context> ctx_;
  std::shared_ptr<fetch_pins> pins_;
};

} // namespace capstan
