#pragma once

// The fault switch for links between nodes: tests make the messages from one node to another
// vanish or arrive late, in one direction or both, to play a slow follower, a cut-off leader or
// a lossy network. Every inter-node sender asks it before each send: replica fetchers, fetch
// sessions, the controller quorum's Raft sends, the controller's LeaderAndIsr / UpdateMetadata /
// StopReplica, a node's registration, heartbeats, AlterPartition and controller requests. Drops
// (not delays) are checked on arrival too, by the sender's id (the node endpoint for every
// node-to-node and node-to-controller request, fetch sessions, the controller's AlterPartition): a fault set in one process then cuts the
// link both ways although the peer's process never heard of it, which is how a real `capstan
// node` is isolated (injectFault, docs/operations.md). With no fault set a check costs one relaxed
// atomic load. Process-wide: in a cluster test every node's actor system shares one process.
//
// Thread-safe: any thread may set, clear or check.

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

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
  // Every message between `node` and each of `peers`, both ways, is dropped until cleared.
  void isolate(node_id node, const std::vector<node_id>& peers);
  void clear(node_id from, node_id to);
  // Every fault on a link to or from `node`.
  void clear_node(node_id node);
  void clear_all();

  // What to do with a message from `from` to `to` now.
  link_fault check(node_id from, node_id to) const;
  // True iff a message from `from` to `to` is dropped now.
  bool dropped(node_id from, node_id to) const {
    return check(from, to).what == link_fault::kind::drop;
  }

private:
  link_faults() = default;

  std::atomic<bool> any_{false};
  mutable std::mutex mu_;
  std::map<std::pair<node_id, node_id>, link_fault> faults_;
};

} // namespace capstan
