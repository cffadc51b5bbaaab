#include "actors/gateway/handlers/alter_configs_handler.hpp"

namespace capstan {

kj::Promise<answer<bool>> handle_alter_configs(const client_session& s, std::string topic,
                                               config_map configs,
                                               std::vector<std::string> deleted) {
  static constexpr const char* method = "alterConfigs";
  const auto& ctx = *s.ctx;
  ctx.metrics.count_request(method);
  if (auto v = validate_topic_name(topic); !v) return refused<bool>(ctx, method, v.err());
  return s.answered_later(
      ask<bool>(ctx, ctx.targets.controller, ctx.admin_timeout, altercfg_atom_v, std::move(topic),
                std::move(configs), std::move(deleted))
          .then([c = s.ctx](answer<bool>&& a) { return counted(*c, method, std::move(a)); }));
}

} // namespace capstan
