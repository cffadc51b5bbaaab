#include "actors/gateway/handlers/offsets_for_leader_epoch_handler.hpp"

#include "actors/gateway/request_validation.hpp"

namespace capstan {

namespace {

constexpr const char* method = "offsetsForLeaderEpoch";

kj::Promise<answer<epoch_end>> ask_epoch_end(const client_session& s, partition_replica_actor dest,
                                             leader_epoch current, leader_epoch requested) {
  const auto& ctx = *s.ctx;
  return ask<epoch_end>(ctx, dest, ctx.admin_timeout, epochend_atom_v, current, requested)
      .then([c = s.ctx](answer<epoch_end>&& a) { return counted(*c, method, std::move(a)); });
}

} // namespace

kj::Promise<answer<epoch_end>>
handle_offsets_for_leader_epoch(const client_session& s, const std::string& topic,
                                int32_t partition, leader_epoch current, leader_epoch requested) {
  const auto& ctx = *s.ctx;
  ctx.metrics.count_request(method);
  if (auto v = validate_topic_partition(topic, partition); !v)
    return refused<epoch_end>(ctx, method, v.err());
  auto dest = route(ctx, topic, partition);
  if (!dest) return refused<epoch_end>(ctx, method, dest.err());
  if (current.value() >= 0) return s.answered_later(ask_epoch_end(s, *dest, current, requested));
  return s.answered_later(
      ask<replica_status>(ctx, *dest, ctx.admin_timeout, status_atom_v)
          .then([s, dest = *dest,
                 requested](answer<replica_status>&& st) -> kj::Promise<answer<epoch_end>> {
            if (!st.ok()) return counted(*s.ctx, method, answer<epoch_end>{{}, std::move(st.err)});
            return ask_epoch_end(s, dest, st.value.epoch, requested);
          }));
}

} // namespace capstan
