#pragma once

// The fault switch for links between nodes: tests make the messages from one node to another
// vanish or arrive late, in one direction or both, to play a slow follower, a cut-off leader or
// a lossy network. The replica fetchers, fetch sessions and the controller quorum's Raft sends
// ask it before each send (the controller's requests and AlterPartition do not: a cut link still
// carries them); with no
// fault set that costs one relaxed atomic load. Process-wide: in a cluster test every node's
// actor system shares one process.
//
// Thread-safe: any thread may set, clear or check.

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <utility>

#include "runtime/types.hpp"

namespace capstan {

struct link_fault {
  enum class kind : uint8_t { pass, drop, delay };
  kind what = kind::pass;
  std::chrono::milliseconds delay{0};
};

class link_faults {
public:
  static link_faults& instance();

  link_faults(const link_faults&) = delete;
  link_faults& operator=(const link_faults&) = delete;

  // Messages from `from` to `to` are dropped or delayed until cleared.
  void drop(node_id from, node_id to);
  void delay(node_id from, node_id to, std::chrono::milliseconds by);
  // Both directions between `a` and `b`.
  void cut(node_id a, node_id b);
  void clear(node_id from, node_id to);
  void clear_all();

  // What to do with a message from `from` to `to` now.
  link_fault check(node_id from, node_id to) const;

private:
  link_faults() = default;

  std::atomic<bool> any_{false};
  mutable std::mutex mu_;
  std::map<std::pair<node_id, node_id>, link_fault> faults_;
};

} // namespace capstan
