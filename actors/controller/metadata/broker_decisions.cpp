#include "actors/controller/metadata/broker_decisions.hpp"

#include <set>
#include <utility>

#include "actors/controller/metadata/leader_election.hpp"

namespace capstan::controller {

namespace {

std::string node_text(node_id n) { return "node " + std::to_string(n.value()); }

// The partition changes for a change in who is live, over every partition `affected` selects.
template <class Affected>
void leadership_changes(const metadata_image& image, const liveness& live,
                        std::optional<node_id> leaving, const decision_options& options,
                        Affected affected, decision& out) {
  for (const auto& [id, topic] : image.topics()) {
    const bool unclean =
      unclean_leader_election_enabled(topic, options.unclean_leader_election_enable);
    for (size_t i = 0; i < topic.partitions.size(); ++i) {
      if (!affected(topic.partitions[i])) continue;
      auto change = leadership_change(topic, partition_id{static_cast<int32_t>(i)}, live, leaving,
                                      unclean, out.warnings);
      if (change) out.records.push_back(std::move(*change));
    }
  }
}

} // namespace

status check_broker_epoch(const metadata_image& image, node_id node, broker_epoch epoch) {
  auto b = image.broker(node);
  if (b == nullptr)
    return make_error(errc::stale_broker_epoch, node_text(node) + " is not registered");
  if (b->epoch != epoch)
    return make_error(errc::stale_broker_epoch,
                      node_text(node) + " is registered with broker epoch " +
                        std::to_string(b->epoch.value()) + ", not " +
                        std::to_string(epoch.value()));
  return {};
}

result<decision> register_broker(const metadata_image& image,
                                 const broker_registration_request& request, bool session_alive,
                                 const decision_options& options) {
  if (request.cluster_id != image.cluster_id())
    return make_error(errc::inconsistent_cluster_id,
                      "expected cluster id '" + image.cluster_id() + "', but " +
                        node_text(request.node) + " has cluster id '" + request.cluster_id + "'");
  if (request.node.value() < 0 || request.client_host.empty() || request.cluster_host.empty() ||
      request.client_port == 0 || request.cluster_port == 0)
    return make_error(errc::invalid_request,
                      "registration of " + node_text(request.node) +
                        " needs a node id >= 0 and client and cluster endpoints with a host and "
                        "a port");
  decision out;
  if (auto existing = image.broker(request.node); existing != nullptr) {
    if (existing->incarnation != request.incarnation && session_alive)
      return make_error(errc::duplicate_broker_registration,
                        "another process is registered as " + node_text(request.node) +
                          " (another incarnation id) and still heartbeats");
    if (!existing->fenced) {
      auto fenced = fence_broker(image, request.node, existing->epoch, options);
      if (!fenced) return fenced.err();
      out = std::move(*fenced);
    }
  }
  out.records.push_back(register_broker_record{
    request.node, request.incarnation, request.cluster_id, request.client_host,
    request.client_port, request.cluster_host, request.cluster_port, request.rack,
    next(image.max_broker_epoch())});
  return out;
}

result<decision> fence_broker(const metadata_image& image, node_id node, broker_epoch epoch,
                              const decision_options& options) {
  if (auto s = check_broker_epoch(image, node, epoch); !s) return s.err();
  decision out;
  if (image.broker(node)->fenced) return out;
  auto live = [&](node_id n) { return n != node && image.is_unfenced(n); };
  leadership_changes(image, live, node, options,
                     [&](const partition_state& p) { return p.in_isr(node) || p.leader == node; },
                     out);
  out.records.push_back(fence_broker_record{node, epoch});
  return out;
}

result<decision> unfence_broker(const metadata_image& image, node_id node, broker_epoch epoch,
                                const decision_options& options) {
  if (auto s = check_broker_epoch(image, node, epoch); !s) return s.err();
  decision out;
  if (!image.broker(node)->fenced) return out;
  out.records.push_back(unfence_broker_record{node, epoch});
  auto live = [&](node_id n) { return n == node || image.is_unfenced(n); };
  leadership_changes(image, live, std::nullopt, options,
                     [&](const partition_state& p) {
                       return p.leader == no_leader && p.has_replica(node);
                     },
                     out);
  return out;
}

result<decision> take_replicas_offline(const metadata_image& image, node_id node,
                                       broker_epoch epoch, const offline_replicas& offline,
                                       const decision_options& options) {
  if (auto s = check_broker_epoch(image, node, epoch); !s) return s.err();
  decision out;
  auto live = [&](node_id n) { return n != node && image.is_unfenced(n); };
  // A replica named twice must not change its partition twice from the same state.
  std::set<std::pair<topic_id, int32_t>> seen;
  for (const auto& r : offline) {
    const auto* topic = image.topic(r.topic);
    const partition_id p{r.partition};
    const auto* current = image.partition(r.topic, p);
    if (current == nullptr || !(current->in_isr(node) || current->leader == node)) continue;
    if (!seen.emplace(r.topic, r.partition).second) continue;
    auto change = leadership_change(
        *topic, p, live, node,
        unclean_leader_election_enabled(*topic, options.unclean_leader_election_enable),
        out.warnings);
    if (change) out.records.push_back(std::move(*change));
  }
  return out;
}

} // namespace capstan::controller
