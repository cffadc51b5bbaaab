#pragma once

// The fault switch for links between nodes: tests make the messages from one node to another
// vanish or arrive late, in one direction or both, to play a slow follower, a cut-off leader or
// a lossy network. Every inter-node sender asks it before each send: replica fetchers, fetch
// sessions, the controller quorum's Raft sends, the controller's LeaderAndIsr / UpdateMetadata /
// StopReplica, a node's registration, heartbeats, AlterPartition and controller requests. Drops
// (not delays) are checked on arrival too, by the sender's id (the node endpoint for every
// node-to-node and node-to-controller request, fetch sessions, the controller's AlterPartition): a
// fault set in one process then cuts the link both ways although the peer's process never heard of
// it, which is how a real `capstan node` is isolated (injectFault, docs/operations.md). Apart from
// links, the controller's control messages can be lost or late by themselves (control_fault), as
// when a LeaderAndIsr goes missing while the link is otherwise fine. With no fault set a check
// costs one relaxed atomic load. Process-wide: in a cluster test every node's actor system shares
// one process.
//
// Thread-safe: any thread may set, clear or check.

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <random>
#include <utility>
#include <vector>

#include "runtime/types.hpp"

namespace capstan {

struct link_fault {
  enum class kind : uint8_t { pass, drop, delay };
  kind what = kind::pass;
  std::chrono::milliseconds delay{0};
};

// What happens to the LeaderAndIsr / UpdateMetadata / StopReplica messages a node's controller
// sends, to any node, on top of the link faults.
struct control_fault {
  // The next this many are lost.
  int32_t drop_next = 0;
  // Once those are gone, each is lost with this probability (0 to 1).
  double drop_probability = 0;
  // One that is not lost goes out this late.
  std::chrono::milliseconds delay{0};
  bool operator==(const control_fault&) const = default;
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
  // Replaces the control fault of `from`'s controller (a default one clears it).
  void set_control(node_id from, control_fault fault);
  // The control fault of `from`'s controller as it is now (drop_next counts down).
  control_fault control(node_id from) const;
  // Every fault on a link to or from `node`, and its control fault.
  void clear_node(node_id node);
  void clear_all();

  // What to do with a message from `from` to `to` now.
  link_fault check(node_id from, node_id to) const;
  // True iff a message from `from` to `to` is dropped now.
  bool dropped(node_id from, node_id to) const {
    return check(from, to).what == link_fault::kind::drop;
  }
  // What to do with the control message `from`'s controller sends `to` now: dropped when the link
  // drops it, else as the control fault says (which counts it against drop_next and draws the
  // probability), else the link's delay.
  link_fault check_control(node_id from, node_id to);

private:
  link_faults() = default;
  // REQUIRES: mu_ held.
  void update_any();

  std::atomic<bool> any_{false};
  mutable std::mutex mu_;
  std::map<std::pair<node_id, node_id>, link_fault> faults_;
  std::map<node_id, control_fault> control_;
  std::mt19937_64 rng_{std::random_device{}()};
};

} // namespace capstan
