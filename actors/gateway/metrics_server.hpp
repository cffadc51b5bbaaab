#pragma once

// The metrics endpoint: Prometheus text over HTTP (docs/metrics.md). `GET /metrics` answers the
// registry's rendering; any other path is 404, any other method 405. One request per connection
// (the response says Connection: close), served on the endpoint's own kj event-loop thread.
//
// HTTP is spoken with kj-async directly: the request head is read (at most 8 KiB, within 10 s)
// and only its request line is interpreted, which is all a scraper needs; kj-http is not linked
// into the build.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <caf/fwd.hpp>

#include "actors/replica/replica_messages.hpp"
#include "runtime/result.hpp"

namespace capstan {

class metrics_registry;

class metrics_server {
public:
  // Called on the endpoint's kj thread before each rendering, to fill gauges from cheap,
  // non-blocking sources (an atomic routing table, cached values). It must not block: values
  // that need actor round trips come from spawn_partition_metrics_refresher instead.
  using refresh_fn = std::function<void(metrics_registry&)>;

  // Binds host:port (port 0: any free port) and serves. Errors: NETWORK_EXCEPTION when the
  // address is unusable.
  static result<std::unique_ptr<metrics_server>> start(std::shared_ptr<metrics_registry> registry,
                                                       const std::string& host, uint16_t port,
                                                       refresh_fn refresh = {});
  // Stops serving and joins the thread. Idempotent.
  void stop();
  ~metrics_server();
  metrics_server(const metrics_server&) = delete;
  metrics_server& operator=(const metrics_server&) = delete;

  uint16_t port() const;

  struct impl;

private:
  explicit metrics_server(std::unique_ptr<impl> impl);
  std::unique_ptr<impl> impl_;
};

// Sets the cluster gauges from a metadata snapshot, as seen by node `self`:
// capstan_under_replicated_partitions (partitions this node leads whose ISR is smaller than their
// replica set), capstan_offline_partitions (partitions whose leader is -1 or not a registered
// broker) and capstan_active_controller_count (1 iff `self` is the controller). Cheap and
// non-blocking: meant for a refresh_fn that holds the latest snapshot.
void fill_cluster_gauges(metrics_registry& registry, const cluster_metadata& md, int32_t self);

// Spawns an actor that, every `interval`, reads the routing table and asks each replica for its
// log_info (bounded by `interval`), then replaces the per-partition gauges:
// capstan_partitions, capstan_log_size_bytes{topic,partition}, capstan_log_start_offset and
// capstan_log_end_offset{topic,partition}. A replica that does not answer in time is left out of
// that round. When `metadata` is set (a metadata_actor, actors/controller/metadata_actor.hpp), it
// also asks it for its snapshot and sets the cluster gauges as seen by `node_id`
// (fill_cluster_gauges); the refresh callback cannot, as it must not wait for an actor. The caller
// ends it with an exit message (e.g. caf::anon_send_exit).
caf::actor spawn_partition_metrics_refresher(caf::actor_system& sys,
                                             std::function<routing_table_ptr()> routes,
                                             std::shared_ptr<metrics_registry> registry,
                                             std::chrono::milliseconds interval,
                                             caf::actor metadata, int32_t node_id);

} // namespace capstan
