#pragma once

// The metrics endpoint: Prometheus text over HTTP (docs/metrics.md). `GET /metrics` answers the
// registry's rendering; any other path is 404, any other method 405. One request per connection
// (the response says Connection: close), served on the endpoint's own kj event-loop thread.
//
// HTTP is spoken with kj-async directly: the request head is read (at most 8 KiB, within 10 s)
// and only its request line is interpreted, which is all a scraper needs; kj-http is not linked
// into the build.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "runtime/result.hpp"

namespace capstan {

class metrics_registry;

class metrics_server {
public:
  // Called on the endpoint's kj thread before each rendering, to fill gauges from cheap,
  // non-blocking sources (an atomic routing table, cached values). It must not block: values
  // that need actor round trips come from spawn_partition_metrics_refresher
  // (metrics_refresher.hpp) instead.
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

} // namespace capstan
