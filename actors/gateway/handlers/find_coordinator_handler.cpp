#include "actors/gateway/handlers/find_coordinator_handler.hpp"

#include <spdlog/spdlog.h>

#include "actors/gateway/request_validation.hpp"

namespace capstan {

kj::Promise<answer<coordinator_address>> handle_find_coordinator(const client_session& s,
                                                                 const std::string& group) {
  static constexpr const char* method = "findCoordinator";
  const auto& ctx = *s.ctx;
  ctx.metrics.count_request(method);
  if (auto v = validate_group_id(group); !v)
    return refused<coordinator_address>(ctx, method, v.err());
  auto cache = controller_cache(ctx);
  if (!cache)
    return refused<coordinator_address>(
        ctx, method,
        make_error(errc::coordinator_not_available,
                   "this node holds no metadata from the controller yet"));
  auto where = find_coordinator(cache->cluster(), group);
  if (where.code == errc::none) {
    coordinator_address found;
    found.node = where.node;
    found.host = where.host;
    found.port = where.port;
    for (const auto& b : cache->cluster().brokers)
      if (b.node_id == where.node) {
        found.kafka_host = b.kafka_host;
        found.kafka_port = b.kafka_port;
      }
    return answer<coordinator_address>{std::move(found), {}};
  }
  if (where.partition >= 0)
    return refused<coordinator_address>(ctx, method, make_error(where.code, where.message));
  // The group's first call on this cluster: the controller creates the offsets topic, and the
  // caller retries until its partition has a leader.
  auto plan = plan_offsets_topic(ctx.targets.offsets_partitions,
                                 ctx.targets.offsets_replication_factor,
                                 cache->cluster().brokers.size());
  if (plan.capped)
    spdlog::warn("node {}: creating {} with replication factor {}, not the {} of "
                 "offsets.topic.replication.factor: only {} nodes are live",
                 ctx.targets.node, consumer_offsets_topic, plan.spec.replication_factor,
                 ctx.targets.offsets_replication_factor, cache->cluster().brokers.size());
  return s.answered_later(
      ask<topic_metadata>(ctx, ctx.targets.controller, ctx.admin_timeout, mktopic_atom_v,
                          plan.spec)
          .then([c = s.ctx, message = where.message](answer<topic_metadata>&& a) {
            if (a.ok())
              spdlog::info("node {}: the controller created {} for the consumer groups",
                           c->targets.node, consumer_offsets_topic);
            else if (a.err.code != errc::topic_already_exists)
              spdlog::warn("node {}: the controller did not create {}: {}", c->targets.node,
                           consumer_offsets_topic, a.err.to_string());
            return refused<coordinator_address>(
                *c, method,
                make_error(errc::coordinator_not_available, message + "; it is being created, retry"));
          }));
}

} // namespace capstan
