#include "actors/gateway/handlers/leave_group_handler.hpp"

#include "actors/gateway/handlers/group_validation.hpp"

namespace capstan {

kj::Promise<answer<bool>> handle_leave_group(const client_session& s, std::string group,
                                             group_member_ref member) {
  static constexpr const char* method = "leaveGroup";
  const auto& ctx = *s.ctx;
  ctx.metrics.count_request(method);
  if (auto v = validate_member(group, member.member_id, member.group_instance_id); !v)
    return refused<bool>(ctx, method, v.err());
  return s.answered_later(
      ask<bool>(ctx, ctx.targets.groups, ctx.admin_timeout, leavegrp_atom_v, std::move(group),
                std::move(member))
          .then([c = s.ctx](answer<bool>&& a) { return counted(*c, method, std::move(a)); }));
}

} // namespace capstan
