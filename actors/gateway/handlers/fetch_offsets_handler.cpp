#include "actors/gateway/handlers/fetch_offsets_handler.hpp"

#include "actors/gateway/handlers/group_validation.hpp"
#include "actors/gateway/request_validation.hpp"

namespace capstan {

kj::Promise<answer<group_offsets>> handle_fetch_offsets(const client_session& s, std::string group,
                                                        group_offsets entries) {
  static constexpr const char* method = "fetchOffsets";
  const auto& ctx = *s.ctx;
  ctx.metrics.count_request(method);
  auto check = validate_group_id(group);
  if (check) check = validate_group_entries(entries);
  if (!check) return refused<group_offsets>(ctx, method, check.err());
  return s.answered_later(
      ask<group_offsets>(ctx, ctx.targets.groups, ctx.admin_timeout, fetch_atom_v,
                         std::move(group), std::move(entries))
          .then([c = s.ctx](answer<group_offsets>&& a) { return counted(*c, method, std::move(a)); }));
}

} // namespace capstan
