#pragma once

// Joins several asynchronous answers inside one actor: each answer calls arrive(), and `done` runs
// after the last one. Start `remaining` at the number of answers plus one and call arrive() once
// after sending them all, so `done` cannot run before every request is out.
// Only the owning actor touches it (its handlers run one at a time), so no locking.

#include <cstddef>
#include <functional>

namespace capstan {

struct countdown {
  size_t remaining;
  std::function<void()> done;
  void arrive() {
    if (--remaining == 0) done();
  }
};

} // namespace capstan
