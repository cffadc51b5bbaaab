#include "actors/gateway/handlers/commit_offsets_handler.hpp"

#include "actors/gateway/handlers/group_validation.hpp"
#include "actors/gateway/request_validation.hpp"

namespace capstan {

kj::Promise<answer<group_offsets>> handle_commit_offsets(const client_session& s,
                                                         std::string group,
                                                         group_member_ref member,
                                                         group_offsets entries) {
  static constexpr const char* method = "commitOffsets";
  const auto& ctx = *s.ctx;
  ctx.metrics.count_request(method);
  auto check = validate_group_id(group);
  if (check) check = validate_member_field(member.member_id, "member id");
  if (check) check = validate_member_field(member.group_instance_id, "group instance id");
  if (check) check = validate_group_entries(entries);
  if (check) {
    for (const auto& e : entries)
      if (e.offset < -1)
        check =
            make_error(errc::offset_out_of_range,
                       "committed offset must be >= 0 (or -1), not " + std::to_string(e.offset));
      else if (e.leader_epoch < -1)
        check = make_error(errc::invalid_request, "committed leader epoch must be >= 0 (or -1), not " +
                                                    std::to_string(e.leader_epoch));
  }
  if (!check) return refused<group_offsets>(ctx, method, check.err());
  return s.answered_later(
      ask<group_offsets>(ctx, ctx.targets.groups, ctx.admin_timeout, commit_atom_v,
                         std::move(group), std::move(member), std::move(entries))
          .then([c = s.ctx](answer<group_offsets>&& a) { return counted(*c, method, std::move(a)); }));
}

} // namespace capstan
