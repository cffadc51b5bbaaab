#include "actors/replica/fetch_states.hpp"

#include <algorithm>

namespace capstan {

void fetch_states::add(const topic_partition& tp, leader_epoch epoch, offset log_end,
                       bool truncate_first) {
  partition_fetch_state s;
  s.epoch = epoch;
  s.fetch_offset = log_end;
  s.phase = truncate_first ? fetch_phase::truncating : fetch_phase::fetching;
  states_[tp] = s;
}

bool fetch_states::remove(const topic_partition& tp, std::optional<leader_epoch> epoch) {
  auto it = states_.find(tp);
  if (it == states_.end() || (epoch && it->second.epoch != *epoch)) return false;
  states_.erase(it);
  return true;
}

std::vector<topic_partition> fetch_states::ready(fetch_phase phase, timestamp_ms now) const {
  std::vector<topic_partition> out;
  for (const auto& [tp, s] : states_)
    if (s.phase == phase && s.delayed_until <= now) out.push_back(tp);
  return out;
}

partition_fetch_state* fetch_states::current(const topic_partition& tp, leader_epoch epoch) {
  auto it = states_.find(tp);
  if (it == states_.end() || it->second.epoch != epoch) return nullptr;
  return &it->second;
}

void fetch_states::truncated(const topic_partition& tp, leader_epoch epoch, offset log_end,
                             bool complete) {
  if (auto* s = current(tp, epoch)) {
    s->fetch_offset = log_end;
    s->handed.reset();
    if (complete) s->phase = fetch_phase::fetching;
  }
}

void fetch_states::advanced(const topic_partition& tp, leader_epoch epoch, offset log_end) {
  if (auto* s = current(tp, epoch)) {
    s->fetch_offset = log_end;
    s->handed.reset();
  }
}

void fetch_states::handed(const topic_partition& tp, leader_epoch epoch, const handed_over& taken) {
  if (auto* s = current(tp, epoch)) {
    s->fetch_offset = taken.log_end;
    s->handed = taken;
  }
}

bool fetch_states::nothing_new(const partition_fetch_state& s, offset high_watermark,
                               offset log_start, uint64_t taker) {
  return s.handed && *s.handed == handed_over{s.fetch_offset, high_watermark, log_start, taker};
}

void fetch_states::needs_truncation(const topic_partition& tp, leader_epoch epoch) {
  if (auto* s = current(tp, epoch)) {
    s->phase = fetch_phase::truncating;
    s->handed.reset();
  }
}

void fetch_states::delay(const topic_partition& tp, leader_epoch epoch, timestamp_ms until) {
  if (auto* s = current(tp, epoch)) s->delayed_until = std::max(s->delayed_until, until);
}

void fetch_states::delay_all(timestamp_ms until) {
  for (auto& [tp, s] : states_) s.delayed_until = std::max(s.delayed_until, until);
}

std::optional<timestamp_ms> fetch_states::next_wakeup(timestamp_ms now) const {
  std::optional<timestamp_ms> out;
  for (const auto& [tp, s] : states_)
    if (s.delayed_until > now && (!out || s.delayed_until < *out)) out = s.delayed_until;
  return out;
}

const partition_fetch_state* fetch_states::find(const topic_partition& tp) const {
  auto it = states_.find(tp);
  return it == states_.end() ? nullptr : &it->second;
}

} // namespace capstan
