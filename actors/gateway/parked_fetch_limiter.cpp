#include "actors/gateway/parked_fetch_limiter.hpp"

#include <cassert>

namespace capstan {

parked_fetch_limiter::parked_fetch_limiter(int32_t max_per_connection, int32_t max_per_node)
    : max_per_connection_(max_per_connection), max_per_node_(max_per_node) {
  assert(max_per_connection >= 0 && max_per_node >= 0);
}

bool parked_fetch_limiter::try_park(connection_count& c) {
  // Only one thread admits, so a concurrent release can only make room: count first, undo if
  // over.
  if (c.parked.fetch_add(1) >= max_per_connection_) {
    c.parked.fetch_sub(1);
    return false;
  }
  if (parked_.fetch_add(1) >= max_per_node_) {
    parked_.fetch_sub(1);
    c.parked.fetch_sub(1);
    return false;
  }
  return true;
}

void parked_fetch_limiter::release(connection_count& c) {
  [[maybe_unused]] const auto before_c = c.parked.fetch_sub(1);
  [[maybe_unused]] const auto before = parked_.fetch_sub(1);
  assert(before_c > 0 && before > 0);
}

} // namespace capstan
