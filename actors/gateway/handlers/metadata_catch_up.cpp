#include "actors/gateway/handlers/metadata_catch_up.hpp"

#include <algorithm>

#include "actors/gateway/handlers/handler_support.hpp"

namespace capstan {

namespace {

kj::Promise<void> await_cached(std::shared_ptr<service_context> ctx, std::string topic,
                               size_t partitions, kj::TimePoint deadline) {
  // Without a cache the node answers from its own metadata: there is nothing to catch up with.
  auto cache = controller_cache(*ctx);
  if (!cache) return kj::READY_NOW;
  const auto& topics = cache->cluster().topics;
  if (auto it = topics.find(topic); it != topics.end() && it->second.partitions.size() >= partitions) {
    auto routes = ctx->targets.routes ? ctx->targets.routes() : nullptr;
    bool open = true;
    for (const auto& p : it->second.partitions)
      if (std::find(p.replicas.begin(), p.replicas.end(), ctx->targets.node) != p.replicas.end())
        open = open && routes && routes->count(topic_partition{topic, p.partition}) != 0;
    if (open) return kj::READY_NOW;
  }
  if (ctx->timer->now() >= deadline) return kj::READY_NOW;
  return ctx->timer->afterDelay(metadata_catch_up_poll)
      .then([ctx, topic = std::move(topic), partitions, deadline]() mutable {
        return await_cached(std::move(ctx), std::move(topic), partitions, deadline);
      });
}

} // namespace

kj::Promise<void> await_cached(std::shared_ptr<service_context> ctx, std::string topic,
                               size_t partitions) {
  const auto deadline = ctx->timer->now() + metadata_catch_up_wait;
  return await_cached(std::move(ctx), std::move(topic), partitions, deadline);
}

} // namespace capstan
