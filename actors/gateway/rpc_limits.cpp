#include "actors/gateway/rpc_limits.hpp"

#include <sys/resource.h>

#include <algorithm>

#include "actors/gateway/request_validation.hpp"

namespace capstan {

namespace {

// Room in a fetch response for everything but the records: the result struct, the error message,
// the Cap'n Proto framing.
constexpr int32_t fetch_response_headroom = int32_t{64} << 10;

} // namespace

uint64_t rpc_limits::traversal_limit_words() const {
  return static_cast<uint64_t>(socket_request_max_bytes) / sizeof(uint64_t);
}

size_t rpc_limits::flow_limit_words() const {
  return static_cast<size_t>(queued_max_request_bytes_per_connection) / sizeof(uint64_t);
}

int32_t rpc_limits::max_fetch_bytes() const {
  return std::min(capstan::max_fetch_bytes, socket_request_max_bytes - fetch_response_headroom);
}

int32_t default_max_connections() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
    return std::numeric_limits<int32_t>::max();
  const auto half = limit.rlim_cur / 2;
  return static_cast<int32_t>(
      std::clamp<rlim_t>(half, 1, static_cast<rlim_t>(std::numeric_limits<int32_t>::max())));
}

rpc_limits default_node_rpc_limits() {
  rpc_limits limits;
  limits.max_connections = default_max_connections();
  return limits;
}

} // namespace capstan
