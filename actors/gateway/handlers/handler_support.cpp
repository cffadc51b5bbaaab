#include "actors/gateway/handlers/handler_support.hpp"

namespace capstan {

result<partition_replica_actor> route(const service_context& ctx, const std::string& topic,
                                      int32_t partition) {
  auto unknown = [&] {
    return make_error(errc::unknown_topic_or_partition,
                      "this node has no replica of " + topic + "-" + std::to_string(partition));
  };
  if (!ctx.targets.routes) return unknown();
  auto table = ctx.targets.routes();
  if (!table) return unknown();
  auto it = table->find(topic_partition{topic, partition});
  if (it == table->end() || !it->second) return unknown();
  return it->second;
}

metadata_cache_ptr controller_cache(const service_context& ctx) {
  return ctx.targets.controller_metadata ? ctx.targets.controller_metadata() : nullptr;
}

uint64_t micros_since(std::chrono::steady_clock::time_point start) {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::steady_clock::now() - start)
                                   .count());
}

} // namespace capstan
