#include "actors/gateway/handlers/fetch_handler.hpp"

#include <algorithm>

#include "actors/gateway/request_validation.hpp"
#include "runtime/metrics/metrics_registry.hpp"

namespace capstan {

namespace {

// Holds a fetch's place under the parked-fetch caps until its replica's answer (ask_holding).
// Released on whichever thread drops it last.
class parked_slot {
public:
  parked_slot(std::shared_ptr<service_context> ctx,
              std::shared_ptr<parked_fetch_limiter::connection_count> count)
      : ctx_(std::move(ctx)), count_(std::move(count)) {}
  parked_slot(const parked_slot&) = delete;
  parked_slot& operator=(const parked_slot&) = delete;
  ~parked_slot() {
    ctx_->parked_fetches.release(*count_);
    if (auto* g = ctx_->metrics.parked_fetches) g->set(ctx_->parked_fetches.parked());
  }

private:
  std::shared_ptr<service_context> ctx_;
  std::shared_ptr<parked_fetch_limiter::connection_count> count_;
};

} // namespace

kj::Promise<answer<fetch_result>> handle_fetch(const client_session& s, const fetch_args& args) {
  static constexpr const char* method = "fetch";
  const auto start = std::chrono::steady_clock::now();
  auto& ctx = *s.ctx;
  const auto& m = ctx.metrics;
  m.count_request(method);
  auto fail = [&](const error& e) -> kj::Promise<answer<fetch_result>> {
    return refused<fetch_result>(ctx, method, e);
  };
  if (auto v = validate_topic_partition(args.topic, args.partition); !v) return fail(v.err());
  auto limits = validate_fetch(args.offset, args.max_bytes, args.min_bytes, args.max_wait_ms,
                               ctx.limits.max_fetch_bytes());
  if (!limits) return fail(limits.err());
  auto dest = route(ctx, args.topic, args.partition);
  if (!dest) return fail(dest.err());
  const leader_epoch epoch{std::max(args.current_leader_epoch, -1)};
  const leader_epoch last_fetched{std::max(args.last_fetched_epoch, -1)};
  fetch_request req{limits->from,        limits->max_bytes, limits->min_bytes,
                    limits->max_wait_ms, epoch,             last_fetched};
  std::shared_ptr<parked_slot> slot;
  if (req.max_wait_ms > 0 && req.min_bytes > 0) {
    if (ctx.parked_fetches.try_park(*s.parked)) {
      slot = std::make_shared<parked_slot>(s.ctx, s.parked);
      if (m.parked_fetches) m.parked_fetches->set(ctx.parked_fetches.parked());
    } else {
      req.max_wait_ms = 0;
      if (m.fetches_not_parked) m.fetches_not_parked->inc();
    }
  }
  auto timeout = std::chrono::milliseconds{req.max_wait_ms} + ctx.reply_margin;
  const int64_t fetch_bytes = slot ? 0 : req.max_bytes;
  const bool parked = slot != nullptr;
  return s.answered_later(
      ask_holding<fetch_result>(ctx, std::move(slot), *dest, timeout, fetch_atom_v, req)
          .then([c = s.ctx, start](answer<fetch_result>&& a) {
            const auto& cm = c->metrics;
            cm.count_error(method, a.err.code);
            if (a.ok() && !a.value.records.empty() && cm.bytes_out)
              cm.bytes_out->inc(a.value.records.size);
            if (cm.fetch_latency) cm.fetch_latency->observe_micros(micros_since(start));
            return std::move(a);
          }),
      fetch_bytes, parked);
}

} // namespace capstan
