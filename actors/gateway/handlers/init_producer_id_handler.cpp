#include "actors/gateway/handlers/init_producer_id_handler.hpp"

namespace capstan {

kj::Promise<answer<producer_identity>> handle_init_producer_id(const client_session& s,
                                                               bool transactional) {
  static constexpr const char* method = "initProducerId";
  const auto& ctx = *s.ctx;
  ctx.metrics.count_request(method);
  if (transactional)
    return refused<producer_identity>(
        ctx, method,
        make_error(errc::invalid_request,
                   "transactionalId must be empty: capstan has no transactions"));
  return s.answered_later(
      ask<int64_t>(ctx, ctx.targets.controller, ctx.admin_timeout, initpid_atom_v)
          .then([c = s.ctx](answer<int64_t>&& a) {
            if (!a.ok()) return refused<producer_identity>(*c, method, std::move(a.err));
            producer_identity id;
            id.producer_id = a.value;
            id.producer_epoch = 0;
            return answer<producer_identity>{id, {}};
          }));
}

} // namespace capstan
