#include "actors/gateway/service_context.hpp"

namespace capstan {

service_context::service_context(caf::actor_system& sys, rpc_targets t, rpc_limits l)
    : targets(std::move(t)), metrics(targets.metrics), limits(l),
      bridge(sys, metrics.bridge_restarts),
      parked_fetches(l.fetch_max_parked_per_connection, l.fetch_max_parked_per_node) {}

} // namespace capstan
