#include "actors/gateway/handlers/list_offsets_handler.hpp"

#include "actors/gateway/request_validation.hpp"

namespace capstan {

kj::Promise<answer<list_offsets_result>> handle_list_offsets(const client_session& s,
                                                             const std::string& topic,
                                                             int32_t partition, int64_t timestamp) {
  static constexpr const char* method = "listOffsets";
  const auto& ctx = *s.ctx;
  ctx.metrics.count_request(method);
  if (auto v = validate_topic_partition(topic, partition); !v)
    return refused<list_offsets_result>(ctx, method, v.err());
  if (auto v = validate_list_offsets_timestamp(timestamp); !v)
    return refused<list_offsets_result>(ctx, method, v.err());
  auto dest = route(ctx, topic, partition);
  if (!dest) return refused<list_offsets_result>(ctx, method, dest.err());
  return s.answered_later(
      ask<list_offsets_result>(ctx, *dest, ctx.admin_timeout, offsets_atom_v,
                               timestamp_ms{timestamp})
          .then([c = s.ctx](answer<list_offsets_result>&& a) {
            return counted(*c, method, std::move(a));
          }));
}

} // namespace capstan
