#include "actors/gateway/handlers/create_topic_handler.hpp"

#include "actors/gateway/handlers/metadata_catch_up.hpp"

namespace capstan {

kj::Promise<answer<topic_metadata>> handle_create_topic(const client_session& s, topic_spec spec) {
  static constexpr const char* method = "createTopic";
  const auto& ctx = *s.ctx;
  ctx.metrics.count_request(method);
  if (auto v = validate_topic_name(spec.name); !v)
    return refused<topic_metadata>(ctx, method, v.err());
  if (is_internal_topic(spec.name))
    return refused<topic_metadata>(
        ctx, method,
        make_error(errc::invalid_request,
                   "creation of internal topic " + spec.name + " is prohibited"));
  auto name = spec.name;
  return s.answered_later(
      ask<topic_metadata>(ctx, ctx.targets.controller, ctx.admin_timeout, mktopic_atom_v,
                          std::move(spec))
          .then([c = s.ctx, name](answer<topic_metadata>&& a) -> kj::Promise<answer<topic_metadata>> {
            if (!a.ok()) return counted(*c, method, std::move(a));
            auto caught_up = await_cached(c, name, 1);
            return caught_up.then([a = std::move(a)]() mutable { return std::move(a); });
          }));
}

} // namespace capstan
