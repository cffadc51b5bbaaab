#include "runtime/cluster/link_faults.hpp"

#include <iterator>

namespace capstan {

link_faults& link_faults::instance() {
  static link_faults faults;
  return faults;
}

void link_faults::drop(node_id from, node_id to) {
  std::lock_guard<std::mutex> guard{mu_};
  faults_[{from, to}] = link_fault{link_fault::kind::drop, {}};
  any_.store(true, std::memory_order_relaxed);
}

void link_faults::delay(node_id from, node_id to, std::chrono::milliseconds by) {
  std::lock_guard<std::mutex> guard{mu_};
  faults_[{from, to}] = link_fault{link_fault::kind::delay, by};
  any_.store(true, std::memory_order_relaxed);
}

void link_faults::cut(node_id a, node_id b) {
  drop(a, b);
  drop(b, a);
}

void link_faults::isolate(node_id node, const std::vector<node_id>& peers) {
  for (auto peer : peers) cut(node, peer);
}

void link_faults::clear(node_id from, node_id to) {
  std::lock_guard<std::mutex> guard{mu_};
  faults_.erase({from, to});
  any_.store(!faults_.empty(), std::memory_order_relaxed);
}

void link_faults::clear_node(node_id node) {
  std::lock_guard<std::mutex> guard{mu_};
  for (auto it = faults_.begin(); it != faults_.end();)
    it = it->first.first == node || it->first.second == node ? faults_.erase(it) : std::next(it);
  any_.store(!faults_.empty(), std::memory_order_relaxed);
}

void link_faults::clear_all() {
  std::lock_guard<std::mutex> guard{mu_};
  faults_.clear();
  any_.store(false, std::memory_order_relaxed);
}

link_fault link_faults::check(node_id from, node_id to) const {
  if (!any_.load(std::memory_order_relaxed)) return {};
  std::lock_guard<std::mutex> guard{mu_};
  auto it = faults_.find({from, to});
  return it == faults_.end() ? link_fault{} : it->second;
}

} // namespace capstan
