#include "actors/gateway/handlers/produce_handler.hpp"

#include "actors/gateway/request_validation.hpp"
#include "runtime/metrics/metrics_registry.hpp"

namespace capstan {

kj::Promise<answer<produce_answer>> handle_produce(const client_session& s,
                                                   const produce_args& args) {
  static constexpr const char* method = "produce";
  const auto start = std::chrono::steady_clock::now();
  const auto& ctx = *s.ctx;
  ctx.metrics.count_request(method);
  auto fail = [&](const error& e) -> kj::Promise<answer<produce_answer>> {
    return refused<produce_answer>(ctx, method, e);
  };
  if (auto v = validate_topic_partition(args.topic, args.partition); !v) return fail(v.err());
  if (auto v = validate_acks(args.acks); !v) return fail(v.err());
  if (auto v = validate_timeout(args.timeout_ms, "timeoutMs"); !v) return fail(v.err());
  auto batch = validate_produce_records(args.records);
  if (!batch) return fail(batch.err());
  auto dest = route(ctx, args.topic, args.partition);
  if (!dest) return fail(dest.err());
  const size_t size = batch->size();
  produce_request req{std::move(*batch), args.acks, args.timeout_ms};
  auto timeout = std::chrono::milliseconds{args.timeout_ms} + ctx.reply_margin;
  return s.answered_later(
      ask<produce_result>(ctx, *dest, timeout, produce_atom_v, std::move(req))
          .then([c = s.ctx, start, size](answer<produce_result>&& a) {
            const auto& m = c->metrics;
            answer<produce_answer> out{produce_answer{a.value, false}, std::move(a.err)};
            if (out.ok() && c->targets.faults && c->targets.faults->take_produce_response()) {
              out.value.drop_response = true;
              return out;
            }
            if (out.ok()) {
              if (m.bytes_in) m.bytes_in->inc(size);
            } else {
              m.count_error(method, out.err.code);
            }
            if (m.produce_latency) m.produce_latency->observe_micros(micros_since(start));
            return out;
          }));
}

} // namespace capstan
