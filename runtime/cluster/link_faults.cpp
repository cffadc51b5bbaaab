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
  update_any();
}

void link_faults::set_control(node_id from, control_fault fault) {
  std::lock_guard<std::mutex> guard{mu_};
  if (fault == control_fault{})
    control_.erase(from);
  else
    control_[from] = fault;
  update_any();
}

control_fault link_faults::control(node_id from) const {
  std::lock_guard<std::mutex> guard{mu_};
  auto it = control_.find(from);
  return it == control_.end() ? control_fault{} : it->second;
}

void link_faults::clear_node(node_id node) {
  std::lock_guard<std::mutex> guard{mu_};
  for (auto it = faults_.begin(); it != faults_.end();)
    it = it->first.first == node || it->first.second == node ? faults_.erase(it) : std::next(it);
  control_.erase(node);
  update_any();
}

void link_faults::clear_all() {
  std::lock_guard<std::mutex> guard{mu_};
  faults_.clear();
  control_.clear();
  update_any();
}

void link_faults::update_any() {
  any_.store(!faults_.empty() || !control_.empty(), std::memory_order_relaxed);
}

link_fault link_faults::check(node_id from, node_id to) const {
  if (!any_.load(std::memory_order_relaxed)) return {};
  std::lock_guard<std::mutex> guard{mu_};
  auto it = faults_.find({from, to});
  return it == faults_.end() ? link_fault{} : it->second;
}

link_fault link_faults::check_control(node_id from, node_id to) {
  if (!any_.load(std::memory_order_relaxed)) return {};
  std::lock_guard<std::mutex> guard{mu_};
  auto link = faults_.find({from, to});
  if (link != faults_.end() && link->second.what == link_fault::kind::drop) return link->second;
  if (auto c = control_.find(from); c != control_.end()) {
    auto& f = c->second;
    if (f.drop_next > 0) {
      --f.drop_next;
      return {link_fault::kind::drop, {}};
    }
    if (f.drop_probability > 0 && std::bernoulli_distribution(f.drop_probability)(rng_))
      return {link_fault::kind::drop, {}};
    if (f.delay.count() > 0) return {link_fault::kind::delay, f.delay};
  }
  return link == faults_.end() ? link_fault{} : link->second;
}

} // namespace capstan
