#pragma once

// The leader's high watermark arithmetic: HW = the smallest log end offset (LEO) over the in-sync
// replicas, the leader included, and never moves backwards (a leader's HW only grows; followers'
// LEOs only count once they are in the ISR). With one node the ISR is the leader alone and the HW
// is its LEO. Plain and synchronous so replication can reuse it; the partition replica actor
// feeds it appends and (later) follower fetch positions.

#include <map>
#include <vector>

#include "runtime/types.hpp"

namespace capstan {

class high_watermark_tracker {
public:
  // `hw`: the last known HW (e.g. from replication-offset-checkpoint); followers in `isr` start
  // at LEO = hw until they report. With no follower the HW is leader_leo at once.
  // REQUIRES: hw <= leader_leo.
  high_watermark_tracker(node_id leader, offset leader_leo, offset hw,
                         const std::vector<node_id>& isr = {});

  high_watermark_tracker(const high_watermark_tracker&) = default;
  high_watermark_tracker& operator=(const high_watermark_tracker&) = default;
  high_watermark_tracker(high_watermark_tracker&&) = default;
  high_watermark_tracker& operator=(high_watermark_tracker&&) = default;

  // Replaces the ISR. The leader is always a member, whether or not `isr` names it. Followers
  // entering the ISR without a known LEO count as LEO = the current HW, so the HW never drops.
  void set_isr(const std::vector<node_id>& isr);

  // The leader's log grew to `leo` (the LEO never shrinks here: a leader does not truncate).
  // Returns true iff the HW advanced.
  bool on_leader_append(offset leo);

  // A follower reported its LEO (with its fetch). Ignored for replicas outside the ISR. Returns
  // true iff the HW advanced.
  bool on_follower_leo(node_id follower, offset leo);

  offset high_watermark() const { return hw_; }
  offset leader_leo() const { return leo_.at(leader_); }
  size_t isr_size() const { return leo_.size(); }
  bool in_isr(node_id n) const { return leo_.count(n) != 0; }

private:
  bool recompute();

  node_id leader_;
  std::map<node_id, offset> leo_; // ISR members -> their log end offsets
  offset hw_;
};

} // namespace capstan
