#pragma once

// Where a follower truncates its log once the leader answered OffsetsForLeaderEpoch for the
// follower's latest epoch (KIP-101, refined by KIP-279; Kafka's
// AbstractFetcherThread.getOffsetTruncationState). Never blindly to the high watermark: that
// loses committed records when two replicas restart one after another (KIP-101's scenarios).

#include "runtime/storage/leader_epoch_cache.hpp"

namespace capstan {

struct truncation_decision {
  offset truncate_to{0};
  // False: the follower does not know the epoch the leader answered with; after truncating it
  // must ask again with its (now older) latest epoch.
  bool complete = true;
  friend bool operator==(const truncation_decision&, const truncation_decision&) = default;
};

// `leader` is the leader's answer for the follower's latest epoch; `own` is the follower's own
// answer for the epoch the leader named (its leader_epoch_cache::end_offset_for(leader.epoch,
// log_end)). A leader that knows no epoch up to the requested one (undefined end offset) leaves
// only the old rule: the high watermark.
truncation_decision decide_truncation(epoch_end own, offset log_end, offset high_watermark,
                                      epoch_end leader);

} // namespace capstan
