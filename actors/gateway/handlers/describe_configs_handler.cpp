#include "actors/gateway/handlers/describe_configs_handler.hpp"

namespace capstan {

kj::Promise<answer<config_map>> handle_describe_configs(const client_session& s,
                                                        std::string topic) {
  static constexpr const char* method = "describeConfigs";
  const auto& ctx = *s.ctx;
  ctx.metrics.count_request(method);
  if (auto v = validate_topic_name(topic); !v) return refused<config_map>(ctx, method, v.err());
  if (auto cache = controller_cache(ctx)) {
    auto r = cache->describe(topic);
    if (!r) return refused<config_map>(ctx, method, r.err());
    return answer<config_map>{std::move(*r), {}};
  }
  return s.answered_later(
      ask<config_map>(ctx, ctx.targets.metadata, ctx.admin_timeout, describe_atom_v,
                      std::move(topic))
          .then([c = s.ctx](answer<config_map>&& a) { return counted(*c, method, std::move(a)); }));
}

} // namespace capstan
