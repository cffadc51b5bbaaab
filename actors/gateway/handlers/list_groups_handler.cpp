#include "actors/gateway/handlers/list_groups_handler.hpp"

namespace capstan {

kj::Promise<answer<std::vector<std::string>>> handle_list_groups(const client_session& s) {
  static constexpr const char* method = "listGroups";
  const auto& ctx = *s.ctx;
  ctx.metrics.count_request(method);
  return s.answered_later(
      ask<std::vector<std::string>>(ctx, ctx.targets.groups, ctx.admin_timeout, lsgroups_atom_v)
          .then([c = s.ctx](answer<std::vector<std::string>>&& a) {
            return counted(*c, method, std::move(a));
          }));
}

} // namespace capstan
