#include "actors/gateway/handlers/join_group_handler.hpp"

#include "actors/gateway/handlers/group_validation.hpp"
#include "actors/gateway/request_validation.hpp"

namespace capstan {

namespace {

status validate_join(const std::string& group, const join_group_request& req) {
  auto check = validate_member(group, req.member_id, req.group_instance_id);
  if (check) check = validate_member_field(req.client_id, "client id");
  if (check) check = validate_member_field(req.protocol_type, "protocol type");
  if (check && req.protocol_type.empty())
    check = make_error(errc::invalid_request, "protocol type is empty");
  if (check && req.protocols.empty()) check = make_error(errc::invalid_request, "no protocols offered");
  for (const auto& p : req.protocols) {
    if (check) check = validate_member_field(p.name, "protocol name");
    if (check && p.name.empty()) check = make_error(errc::invalid_request, "a protocol name is empty");
  }
  if (check && req.rebalance_timeout_ms <= 0)
    check = make_error(errc::invalid_request, "rebalance timeout must be positive, not " +
                                                  std::to_string(req.rebalance_timeout_ms));
  return check;
}

} // namespace

kj::Promise<answer<join_group_response>> handle_join_group(const client_session& s,
                                                           std::string group,
                                                           join_group_request req) {
  static constexpr const char* method = "joinGroup";
  const auto& ctx = *s.ctx;
  ctx.metrics.count_request(method);
  if (auto check = validate_join(group, req); !check) {
    auto out = refused<join_group_response>(ctx, method, check.err());
    out.value.member_id = req.member_id;
    return out;
  }
  // The answer waits for the join phase, which ends within the group's rebalance timeout.
  const auto wait = ctx.admin_timeout + std::chrono::milliseconds(req.rebalance_timeout_ms);
  return s.answered_later(
      ask<join_group_response>(ctx, ctx.targets.groups, wait, joingrp_atom_v, std::move(group),
                               std::move(req))
          .then([c = s.ctx](answer<join_group_response>&& a) {
            if (a.ok() && a.value.error != errc::none)
              a.err = make_error(a.value.error, a.value.message);
            return counted(*c, method, std::move(a));
          }));
}

} // namespace capstan
