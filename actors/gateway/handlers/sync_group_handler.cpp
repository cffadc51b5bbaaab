#include "actors/gateway/handlers/sync_group_handler.hpp"

#include "actors/gateway/handlers/group_validation.hpp"

namespace capstan {

kj::Promise<answer<sync_group_response>> handle_sync_group(const client_session& s,
                                                           std::string group,
                                                           sync_group_request req) {
  static constexpr const char* method = "syncGroup";
  const auto& ctx = *s.ctx;
  ctx.metrics.count_request(method);
  if (auto check = validate_member(group, req.member_id, req.group_instance_id); !check)
    return refused<sync_group_response>(ctx, method, check.err());
  // A follower's sync waits for the leader's, which comes within the rebalance.
  const auto wait = 2 * ctx.admin_timeout;
  return s.answered_later(
      ask<sync_group_response>(ctx, ctx.targets.groups, wait, syncgrp_atom_v, std::move(group),
                               std::move(req))
          .then([c = s.ctx](answer<sync_group_response>&& a) {
            if (a.ok() && a.value.error != errc::none)
              a.err = make_error(a.value.error, a.value.message);
            return counted(*c, method, std::move(a));
          }));
}

} // namespace capstan
