#pragma once

// The active controller's streams of control messages, one per node (docs/controller.md,
// "Metadata that always arrives"): each node's LeaderAndIsr, UpdateMetadata and StopReplica go out
// one at a time, in the order decided, numbered 1, 2, 3, ... (the node applies n only right after
// n - 1, actors/replica/control_sequence.hpp). A message that fails, times out, is lost or is
// refused leaves the node needing its whole state: its queue is dropped (the node would refuse
// what follows as a gap) and, once the node shows that its link works again (its next heartbeat),
// the controller queues the node's full state, which restarts the stream. So whatever the network
// loses, every node converges to the committed metadata within a heartbeat interval of its links
// healing, and no queue grows without bound for a node that is gone: past `max_queued` messages
// the queue is dropped in favour of a full state later.
//
// Plain and synchronous; the controller actor drives it. Not thread-safe.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <vector>

#include "actors/controller/active_controller.hpp"

namespace capstan::controller {

class control_streams {
public:
  explicit control_streams(size_t max_queued = 256) : max_queued_(max_queued) {}

  // A new activity of the controller (or none): every queue and message out is forgotten. Each
  // stream goes on from the number after the last one given: the controller epoch may be the
  // same as the last activity's, and a node takes a number it applied for a duplicate.
  void reset();

  // Numbers and queues `messages`, per node in the order given. A node that needs its full state
  // takes only messages from one that starts it on (a full UpdateMetadata); a LeaderAndIsr or
  // UpdateMetadata delta joins a queued one of its kind when it may go before what follows that
  // one (outgoing_message::absorb, may_follow); a node's queue that would pass max_queued is
  // dropped and the node needs its full state.
  void queue(std::vector<outgoing_message> messages);

  // The next message for `node`, numbered and encoded, unless one is out to it already or none
  // waits. It stays out until answered().
  struct sendable {
    outgoing_message::kind what;
    capnp_frame frame;
    size_t partitions = 0;
    // How long the node may take to answer, `base` plus 1 ms per partition named: a node that
    // opens 10,000 replicas for one LeaderAndIsr takes seconds, and a message that timed out costs
    // the node its whole state again.
    std::chrono::milliseconds timeout(std::chrono::milliseconds base) const {
      return base + std::chrono::milliseconds(static_cast<int64_t>(partitions));
    }
  };
  std::optional<sendable> next(node_id node);

  // The message out to `node` was applied (`applied`), or not: refused, timed out or lost. Then
  // the node's queue is dropped and it needs its full state.
  void answered(node_id node, bool applied);

  // True iff `node` needs its full state and nothing is queued or out to it: the caller queues
  // the full state (at the node's heartbeat, when its link is known to work).
  bool wants_full_state(node_id node) const;

  // How many messages wait for `node` (tests, and the actor's log).
  size_t queued(node_id node) const;

private:
  struct numbered {
    int64_t sequence;
    outgoing_message message;
  };
  struct stream {
    std::deque<numbered> queue;
    bool out = false;
    bool needs_full_state = false;
    int64_t next_sequence = 1;
  };

  void drop(stream& s);
  bool joined(stream& s, outgoing_message& m);

  size_t max_queued_;
  std::map<node_id, stream> streams_;
};

} // namespace capstan::controller
