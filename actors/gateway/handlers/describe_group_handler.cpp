#include "actors/gateway/handlers/describe_group_handler.hpp"

#include "actors/gateway/request_validation.hpp"

namespace capstan {

kj::Promise<answer<group_summary>> handle_describe_group(const client_session& s,
                                                         std::string group) {
  static constexpr const char* method = "describeGroup";
  const auto& ctx = *s.ctx;
  ctx.metrics.count_request(method);
  if (auto v = validate_group_id(group); !v) return refused<group_summary>(ctx, method, v.err());
  return s.answered_later(
      ask<group_summary>(ctx, ctx.targets.groups, ctx.admin_timeout, descgrp_atom_v,
                         std::move(group))
          .then([c = s.ctx](answer<group_summary>&& a) { return counted(*c, method, std::move(a)); }));
}

} // namespace capstan
