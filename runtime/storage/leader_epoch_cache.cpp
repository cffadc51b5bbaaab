#include "runtime/storage/leader_epoch_cache.hpp"

#include <algorithm>

namespace capstan {

leader_epoch_cache::leader_epoch_cache(std::vector<epoch_entry> entries) {
  for (const auto& e : entries) {
    if (e.epoch.value() < 0 || e.start.value() < 0) break;
    if (!entries_.empty() && (e.epoch <= entries_.back().epoch || e.start <= entries_.back().start))
      break;
    entries_.push_back(e);
  }
}

bool leader_epoch_cache::assign(leader_epoch epoch, offset start) {
  if (epoch.value() < 0 || start.value() < 0) return false;
  if (!entries_.empty() && entries_.back().epoch == epoch && entries_.back().start <= start)
    return false;
  while (!entries_.empty() && (entries_.back().epoch >= epoch || entries_.back().start >= start))
    entries_.pop_back();
  entries_.push_back(epoch_entry{epoch, start});
  return true;
}

epoch_end leader_epoch_cache::end_offset_for(leader_epoch requested, offset log_end) const {
  if (requested.value() < 0 || entries_.empty()) return undefined_epoch_end;
  if (entries_.back().epoch == requested) return epoch_end{requested, log_end};
  // The first entry with an epoch above the requested one.
  auto higher = std::upper_bound(entries_.begin(), entries_.end(), requested,
                                 [](leader_epoch e, const epoch_entry& x) { return e < x.epoch; });
  if (higher == entries_.end()) return undefined_epoch_end;
  if (higher == entries_.begin()) return epoch_end{requested, higher->start};
  return epoch_end{std::prev(higher)->epoch, higher->start};
}

bool leader_epoch_cache::truncate_from_end(offset end) {
  bool changed = false;
  while (!entries_.empty() && entries_.back().start >= end) {
    entries_.pop_back();
    changed = true;
  }
  return changed;
}

bool leader_epoch_cache::truncate_from_start(offset start) {
  // The last entry starting at or before `start` covers it; everything before that goes.
  auto covering = std::upper_bound(entries_.begin(), entries_.end(), start,
                                   [](offset s, const epoch_entry& x) { return s < x.start; });
  if (covering == entries_.begin()) return false;
  --covering;
  bool changed = covering != entries_.begin() || covering->start != start;
  covering->start = start;
  entries_.erase(entries_.begin(), covering);
  return changed;
}

bool leader_epoch_cache::clear() {
  bool changed = !entries_.empty();
  entries_.clear();
  return changed;
}

std::optional<epoch_entry> leader_epoch_cache::latest() const {
  if (entries_.empty()) return std::nullopt;
  return entries_.back();
}

} // namespace capstan
