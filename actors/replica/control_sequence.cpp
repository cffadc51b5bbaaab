#include "actors/replica/control_sequence.hpp"

namespace capstan {

control_sequence::verdict control_sequence::admit(int32_t epoch, int64_t sequence, bool full) {
  if (sequence == 0) return verdict::apply;
  // Late: a newer message of this controller was applied already (a full state too).
  if (epoch == epoch_ && sequence <= last_) return verdict::duplicate;
  if (full) {
    epoch_ = epoch;
    last_ = sequence;
    return verdict::apply;
  }
  // A new controller's messages before its full state arrived: that state was lost.
  if (epoch != epoch_ || sequence != last_ + 1) return verdict::gap;
  last_ = sequence;
  return verdict::apply;
}

} // namespace capstan
