#include "actors/gateway/handlers/delete_group_handler.hpp"

#include "actors/gateway/request_validation.hpp"

namespace capstan {

kj::Promise<answer<bool>> handle_delete_group(const client_session& s, std::string group) {
  static constexpr const char* method = "deleteGroup";
  const auto& ctx = *s.ctx;
  ctx.metrics.count_request(method);
  if (auto v = validate_group_id(group); !v) return refused<bool>(ctx, method, v.err());
  return s.answered_later(
      ask<bool>(ctx, ctx.targets.groups, ctx.admin_timeout, delgrp_atom_v, std::move(group))
          .then([c = s.ctx](answer<bool>&& a) { return counted(*c, method, std::move(a)); }));
}

} // namespace capstan
