#pragma once

// One node's fault switch as a client drives it (schema/client.capnp, injectFault; `capstan
// debug fault`): cut this node off from peers, drop its next produce responses, or clear both.
// Only a node started with fault.injection.enable = true has one (docs/operations.md, "Fault
// injection"). Cutting off sets link_faults for every link between this node and a peer, both
// ways; since senders and receivers both ask link_faults, that alone cuts a real process off
// from the others, whose own switches stay clear.
//
// Thread-safe: the RPC thread sets it, the RPC thread asks it on every produce answer.

#include <atomic>
#include <cstdint>
#include <vector>

#include "runtime/result.hpp"
#include "runtime/types.hpp"

namespace capstan {

class node_fault_switch {
public:
  explicit node_fault_switch(node_id self) : self_(self) {}
  node_fault_switch(const node_fault_switch&) = delete;
  node_fault_switch& operator=(const node_fault_switch&) = delete;

  // Drops every message between this node and each of `peers` until clear(); adds to the peers
  // cut off before. INVALID_REQUEST (and nothing set) for no peers, a negative id or this node's.
  status isolate(const std::vector<int32_t>& peers);
  // The next `count` produce responses are dropped (replacing what was left). INVALID_REQUEST
  // for a negative count.
  status drop_produce_responses(int32_t count);
  // Undoes both: every link of this node passes, no produce response is dropped.
  void clear();

  // True iff this produce response is to be dropped (and counts it). One relaxed atomic load
  // while nothing is to be dropped.
  bool take_produce_response();

private:
  node_id self_;
  std::atomic<int32_t> produce_drops_{0};
};

} // namespace capstan
