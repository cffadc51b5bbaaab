#pragma once

// The metric series the client gateway updates (docs/metrics.md), resolved once per server so
// that counting a request takes no lock. Both front doors count into the same series: a request
// is counted under its native method name whichever door it came through.

#include <memory>
#include <utility>
#include <vector>

#include "runtime/errc.hpp"

namespace capstan {

class metrics_registry;
class metric_counter;
class metric_gauge;
class metric_histogram;

// Empty (every pointer null) when the server has no registry.
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

} // namespace capstan
