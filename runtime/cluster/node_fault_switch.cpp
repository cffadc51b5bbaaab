#include "runtime/cluster/node_fault_switch.hpp"

#include <string>

#include "runtime/cluster/link_faults.hpp"

namespace capstan {

status node_fault_switch::isolate(const std::vector<int32_t>& peers) {
  if (peers.empty()) return make_error(errc::invalid_request, "isolate needs at least one peer");
  std::vector<node_id> ids;
  for (auto p : peers) {
    if (p < 0 || p == self_.value())
      return make_error(errc::invalid_request, "node " + std::to_string(self_.value()) +
                                                   " cannot be cut off from node " +
                                                   std::to_string(p));
    ids.push_back(node_id{p});
  }
  link_faults::instance().isolate(self_, ids);
  return {};
}

status node_fault_switch::drop_produce_responses(int32_t count) {
  if (count < 0)
    return make_error(errc::invalid_request,
                      "cannot drop " + std::to_string(count) + " produce responses");
  produce_drops_.store(count, std::memory_order_relaxed);
  return {};
}

void node_fault_switch::clear() {
  link_faults::instance().clear_node(self_);
  produce_drops_.store(0, std::memory_order_relaxed);
}

bool node_fault_switch::take_produce_response() {
  auto left = produce_drops_.load(std::memory_order_relaxed);
  while (left > 0)
    if (produce_drops_.compare_exchange_weak(left, left - 1, std::memory_order_relaxed))
      return true;
  return false;
}

} // namespace capstan
