#pragma once

// One timer for many deadlines inside one actor: the actor sends itself a tick only when none it
// already armed comes by the deadline it needs, and on each tick arms the next. A timer per
// request would wake CAF's clock thread to set it and again to fire or cancel it. Only the owning
// actor touches it (its handlers run one at a time), so no locking.

#include <optional>

namespace capstan {

template <class TimePoint>
class armed_tick {
public:
  // True iff a tick must be sent to come by `due`: none armed comes by then. It is then taken
  // as armed for `due`.
  bool arm(TimePoint due) {
    if (at_ && *at_ <= due) return false;
    at_ = due;
    return true;
  }
  // A tick arrived at `now`; once `now` reaches the armed one, that one has fired.
  void arrived(TimePoint now) {
    if (at_ && now >= *at_) at_.reset();
  }

private:
  std::optional<TimePoint> at_;
};

} // namespace capstan
