#include "actors/gateway/handlers/create_partitions_handler.hpp"

#include "actors/gateway/handlers/metadata_catch_up.hpp"

namespace capstan {

kj::Promise<answer<bool>> handle_create_partitions(const client_session& s, std::string topic,
                                                   int32_t total) {
  static constexpr const char* method = "createPartitions";
  const auto& ctx = *s.ctx;
  ctx.metrics.count_request(method);
  if (auto v = validate_topic_name(topic); !v) return refused<bool>(ctx, method, v.err());
  auto name = topic;
  return s.answered_later(
      ask<bool>(ctx, ctx.targets.controller, ctx.admin_timeout, mkparts_atom_v, std::move(topic),
                total)
          .then([c = s.ctx, name, total](answer<bool>&& a) -> kj::Promise<answer<bool>> {
            if (!a.ok()) return counted(*c, method, std::move(a));
            return await_cached(c, name, static_cast<size_t>(total)).then([] {
              return answer<bool>{true, {}};
            });
          }));
}

} // namespace capstan
