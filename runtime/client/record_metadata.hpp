#pragma once

// Where an acknowledged record landed.

#include <cstdint>
#include <string>

#include "runtime/types.hpp"

namespace capstan::client {

struct record_metadata {
  std::string topic;
  int32_t partition = 0;
  offset off{0}; // -1 with acks=0 (the leader does not answer with an offset)
};

} // namespace capstan::client
