#include "runtime/cluster/node_fault_switch.hpp"

#include <cerrno>
#include <string>

#include "runtime/cluster/link_faults.hpp"
#include "runtime/storage/fault_injection_env.hpp"

namespace capstan {

result<std::vector<node_id>> node_fault_switch::peer_ids(const std::vector<int32_t>& peers) const {
  if (peers.empty()) return make_error(errc::invalid_request, "a cut needs at least one peer");
  std::vector<node_id> ids;
  for (auto p : peers) {
    if (p < 0 || p == self_.value())
      return make_error(errc::invalid_request, "node " + std::to_string(self_.value()) +
                                                   " cannot be cut off from node " +
                                                   std::to_string(p));
    ids.push_back(node_id{p});
  }
  return ids;
}

status node_fault_switch::isolate(const std::vector<int32_t>& peers) {
  auto ids = peer_ids(peers);
  if (!ids) return ids.err();
  link_faults::instance().isolate(self_, *ids);
  return {};
}

status node_fault_switch::drop_outgoing(const std::vector<int32_t>& peers) {
  auto ids = peer_ids(peers);
  if (!ids) return ids.err();
  for (auto peer : *ids) link_faults::instance().drop(self_, peer);
  return {};
}

status node_fault_switch::drop_incoming(const std::vector<int32_t>& peers) {
  auto ids = peer_ids(peers);
  if (!ids) return ids.err();
  for (auto peer : *ids) link_faults::instance().drop(peer, self_);
  return {};
}

status node_fault_switch::drop_control(int32_t count, double probability) {
  if (count < 0 || !(probability >= 0 && probability <= 1))
    return make_error(errc::invalid_request,
                      "cannot drop " + std::to_string(count) +
                          " control messages and then each with probability " +
                          std::to_string(probability));
  auto& links = link_faults::instance();
  auto fault = links.control(self_);
  fault.drop_next = count;
  fault.drop_probability = probability;
  links.set_control(self_, fault);
  return {};
}

status node_fault_switch::delay_control(int32_t delay_ms) {
  if (delay_ms < 1)
    return make_error(errc::invalid_request,
                      "cannot delay control messages by " + std::to_string(delay_ms) + " ms");
  auto& links = link_faults::instance();
  auto fault = links.control(self_);
  fault.delay = std::chrono::milliseconds(delay_ms);
  links.set_control(self_, fault);
  return {};
}

status node_fault_switch::drop_produce_responses(int32_t count) {
  if (count < 0)
    return make_error(errc::invalid_request,
                      "cannot drop " + std::to_string(count) + " produce responses");
  produce_drops_.store(count, std::memory_order_relaxed);
  return {};
}

status node_fault_switch::fail_disk(disk_failure how) {
  if (!storage_)
    return make_error(errc::invalid_request,
                      "node " + std::to_string(self_.value()) + " has no storage fault injection");
  // Again on a failed disk: the rules once, not twice.
  storage_->clear(data_dir_);
  const int err = how == disk_failure::full ? ENOSPC : how == disk_failure::read_only ? EROFS : EIO;
  storage_->fill_disk(data_dir_, err);
  return {};
}

void node_fault_switch::clear() {
  link_faults::instance().clear_node(self_);
  produce_drops_.store(0, std::memory_order_relaxed);
  if (storage_) storage_->clear(data_dir_);
}

bool node_fault_switch::take_produce_response() {
  auto left = produce_drops_.load(std::memory_order_relaxed);
  while (left > 0)
    if (produce_drops_.compare_exchange_weak(left, left - 1, std::memory_order_relaxed))
      return true;
  return false;
}

} // namespace capstan
