#include "actors/replica/truncation.hpp"

#include <algorithm>

namespace capstan {

truncation_decision decide_truncation(epoch_end own, offset log_end, offset high_watermark,
                                      epoch_end leader) {
  if (leader.end.value() < 0) return {std::min(high_watermark, log_end), true};
  if (own.end.value() < 0) return {std::min(leader.end, log_end), true};
  if (own.epoch != leader.epoch) return {std::min(own.end, log_end), false};
  return {std::min({own.end, leader.end, log_end}), true};
}

} // namespace capstan
