#pragma once

// Where an acknowledged record landed.

#include <cstdint>
#include <string>

#include "runtime/types.hpp"

namespace capstan::client {

struct record_metadata {
  std::string topic;
  int32_t partition = 0;
  // -1 when unknown: with acks=0 (the leader does not answer with an offset), and for an
  // idempotent batch known to be in the log only because a later one was acknowledged
  // (docs/idempotence.md, "Retries").
  offset off{0};
};

} // namespace capstan::client
