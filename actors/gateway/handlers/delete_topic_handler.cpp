#include "actors/gateway/handlers/delete_topic_handler.hpp"

namespace capstan {

kj::Promise<answer<bool>> handle_delete_topic(const client_session& s, std::string name) {
  static constexpr const char* method = "deleteTopic";
  const auto& ctx = *s.ctx;
  ctx.metrics.count_request(method);
  if (auto v = validate_topic_name(name); !v) return refused<bool>(ctx, method, v.err());
  return s.answered_later(
      ask<bool>(ctx, ctx.targets.controller, ctx.admin_timeout, rmtopic_atom_v, std::move(name))
          .then([c = s.ctx](answer<bool>&& a) { return counted(*c, method, std::move(a)); }));
}

} // namespace capstan
