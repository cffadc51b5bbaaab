#include "actors/gateway/gateway_metrics.hpp"

#include <cstring>
#include <string>

#include "runtime/metrics/metrics_registry.hpp"

namespace capstan {

gateway_metrics::gateway_metrics(std::shared_ptr<metrics_registry> r) : registry(std::move(r)) {
  if (!registry) return;
  bytes_in = &registry->counter("capstan_bytes_in_total",
                                "Record batch bytes accepted by produce requests");
  bytes_out =
      &registry->counter("capstan_bytes_out_total", "Record bytes returned by fetch responses");
  produce_latency = &registry->histogram("capstan_rpc_request_latency_seconds",
                                         "Time from receiving a request to its response",
                                         {{"method", "produce"}});
  fetch_latency =
      &registry->histogram("capstan_rpc_request_latency_seconds",
                           "Time from receiving a request to its response", {{"method", "fetch"}});
  connections = &registry->counter("capstan_rpc_connections_total", "Client connections accepted");
  open_connections = &registry->gauge("capstan_rpc_connections", "Client connections open");
  const char* refused_help = "Client connections closed at once because a limit was reached";
  refused_max_connections = &registry->counter("capstan_rpc_connections_refused_total",
                                               refused_help, {{"limit", "max.connections"}});
  refused_max_connections_per_ip = &registry->counter(
      "capstan_rpc_connections_refused_total", refused_help, {{"limit", "max.connections.per.ip"}});
  accept_errors = &registry->counter("capstan_rpc_accept_errors_total",
                                     "Failed accepts on the client listener (e.g. out of file "
                                     "descriptors); accepting resumes after a pause");
  parked_fetches = &registry->gauge("capstan_rpc_parked_fetches",
                                    "Client fetches in flight that may park in their replica");
  fetches_not_parked = &registry->counter(
      "capstan_rpc_fetches_not_parked_total",
      "Fetches answered at once because fetch.max.parked.per.connection or .per.node was reached");
  bridge_restarts = &registry->counter("capstan_rpc_bridge_restarts_total",
                                       "RPC bridge actors replaced after they ended");
  for (const char* method :
       {"metadata", "createTopic", "deleteTopic", "listTopics", "describeConfigs", "alterConfigs",
        "produce", "fetch", "listOffsets", "commitOffsets", "fetchOffsets", "describeCluster",
        "initProducerId", "createPartitions", "electLeaders", "injectFault", "reassignPartitions",
        "unregisterNode", "findCoordinator", "listGroups", "joinGroup", "syncGroup", "heartbeat",
        "leaveGroup", "describeGroup", "deleteGroup", "addVoter", "removeVoter"})
    requests.emplace_back(method,
                          &registry->counter("capstan_rpc_requests_total",
                                             "Client RPC requests received", {{"method", method}}));
}

void gateway_metrics::count_request(const char* method) const {
  for (const auto& [name, counter] : requests)
    if (std::strcmp(name, method) == 0) return counter->inc();
}

void gateway_metrics::count_error(const char* method, errc code) const {
  if (registry && code != errc::none)
    registry
        ->counter("capstan_rpc_errors_total", "Client RPC responses with an error code",
                  {{"method", method}, {"code", std::string{to_string(code)}}})
        .inc();
}

} // namespace capstan
