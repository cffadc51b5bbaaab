#pragma once

// A replica's log as the controller simulation models it (controller_simulation.hpp): only the
// leader epoch of each record, kept as runs like a log's leader epoch cache. That is what the
// controller's last-replica-standing recovery reads from a replica (the epoch of its last record
// and its log end), and enough to say whether one log holds another's records: one leader
// appends in each leader epoch, so two logs with a record of the same epoch at the same offset
// agree up to it (Raft's log matching).

#include <algorithm>
#include <cstdint>
#include <vector>

namespace capstan::controller::test {

class simulated_log {
public:
  int64_t end() const { return runs_.empty() ? 0 : runs_.back().end; }
  // -1 when empty.
  int32_t last_epoch() const { return runs_.empty() ? -1 : runs_.back().epoch; }

  // REQUIRES: epoch >= last_epoch() (a leader appends at its own leader epoch).
  void append(int32_t epoch) {
    if (runs_.empty() || runs_.back().epoch != epoch) runs_.push_back(run{epoch, end()});
    ++runs_.back().end;
  }

  // The number of records this log shares with `other` from the start.
  int64_t common_prefix(const simulated_log& other) const {
    int64_t start = 0;
    for (size_t k = 0; k < std::min(runs_.size(), other.runs_.size()); ++k) {
      const auto& a = runs_[k];
      const auto& b = other.runs_[k];
      if (a.epoch != b.epoch) return start;
      if (a.end != b.end) return std::min(a.end, b.end);
      start = a.end;
    }
    return start;
  }

  // True iff this log holds every record of `other`.
  bool holds(const simulated_log& other) const { return common_prefix(other) == other.end(); }

  // This log's first `n` records.
  simulated_log prefix(int64_t n) const {
    simulated_log out;
    for (const auto& r : runs_) {
      if (out.end() >= n) break;
      out.runs_.push_back(run{r.epoch, std::min(r.end, n)});
    }
    return out;
  }

private:
  // The records from the previous run's end up to `end` have leader epoch `epoch`.
  struct run {
    int32_t epoch = 0;
    int64_t end = 0;
  };
  std::vector<run> runs_;
};

} // namespace capstan::controller::test
