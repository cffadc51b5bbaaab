#include "actors/gateway/handlers/metadata_handler.hpp"

#include <algorithm>

#include "actors/gateway/request_validation.hpp"

namespace capstan {

kj::Promise<answer<metadata_snapshot>> handle_metadata(const client_session& s,
                                                       const char* method) {
  const auto& ctx = *s.ctx;
  ctx.metrics.count_request(method);
  if (auto cache = controller_cache(ctx)) {
    // The snapshot shares the cache's ownership: the cache lives while the answer does.
    const cluster_metadata* md = &cache->cluster();
    return answer<metadata_snapshot>{metadata_snapshot{std::move(cache), md}, {}};
  }
  return s.answered_later(
      ask<metadata_snapshot>(ctx, ctx.targets.metadata, ctx.admin_timeout, snapshot_atom_v)
          .then([c = s.ctx, method](answer<metadata_snapshot>&& a) {
            if (a.ok() && !a.value)
              a.err = make_error(errc::unknown_server_error, "empty snapshot");
            return counted(*c, method, std::move(a));
          }));
}

bool broker_live(const std::vector<broker_info>& brokers, int32_t node) {
  return std::any_of(brokers.begin(), brokers.end(),
                     [&](const broker_info& b) { return b.node_id == node; });
}

error missing_topic_error(const std::string& name) {
  auto valid = validate_topic_name(name);
  if (!valid) return valid.err();
  return make_error(errc::unknown_topic_or_partition, "unknown topic " + name);
}

} // namespace capstan
