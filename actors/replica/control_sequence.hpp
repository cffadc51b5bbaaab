#pragma once

// Where a control message from the controller (LeaderAndIsr, UpdateMetadata, StopReplica) stands
// in the controller's stream to this node (docs/controller.md, "Metadata that always arrives").
// The controller numbers its messages to each node 1, 2, 3, ... within its epoch and starts the
// stream with a full UpdateMetadata (after it became active, after the node registered, and
// whenever a message to the node failed). A node applies message n only right after n - 1, so a
// lost, late or reordered message shows as a gap, which the node refuses and the controller
// answers with the node's whole state: every node converges to the committed metadata, whatever
// the network lost on the way.
//
// Plain and synchronous: the replica manager asks it once per control message, after the
// message's controller epoch was accepted. Not thread-safe.

#include <cstdint>

namespace capstan {

class control_sequence {
public:
  enum class verdict {
    apply,     // in order (or unsequenced, or a full state): apply it
    duplicate, // at or below the last one applied (late, or sent twice): answer as applied,
               // change nothing
    gap,       // something before it is missing: refuse it (INVALID_UPDATE_VERSION)
  };

  // REQUIRES: `epoch` is not below the epoch of any message admitted before (the replica manager
  // refuses stale controller epochs first). `sequence` 0 is an unsequenced message, applied as it
  // comes; `full` is a full UpdateMetadata, which starts the stream of its epoch at `sequence`
  // unless it is older than the last message applied.
  verdict admit(int32_t epoch, int64_t sequence, bool full);

  // The epoch and the last sequence applied in it (0: none, waiting for a full state).
  int32_t epoch() const { return epoch_; }
  int64_t last() const { return last_; }

private:
  int32_t epoch_ = -1;
  int64_t last_ = 0;
};

} // namespace capstan
