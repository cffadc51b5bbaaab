#pragma once

// InitProducerId: a new idempotent producer id from the active controller, at epoch 0. capstan
// has no transactions: a transactional id is refused.

#include <cstdint>

#include "actors/gateway/handlers/handler_support.hpp"

namespace capstan {

struct producer_identity {
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
};

kj::Promise<answer<producer_identity>> handle_init_producer_id(const client_session& s,
                                                               bool transactional);

} // namespace capstan
