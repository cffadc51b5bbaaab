#include "actors/controller/raft/raft_log.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "actors/controller/raft/raft_invariant.hpp"
#include "actors/controller/raft/voter_set.hpp"

namespace capstan::raft {

namespace {

std::string idx(log_index i) {
  return std::to_string(i.value());
}

} // namespace

raft_log::raft_log(snapshot snap, std::vector<entry> entries)
    : snapshot_(std::move(snap)), entries_(std::move(entries)) {
  for (size_t k = 0; k < entries_.size(); ++k)
    RAFT_INVARIANT(entries_[k].index == snapshot_index() + (k + 1),
                   "entry " + idx(entries_[k].index) + " at position " + std::to_string(k) +
                       " after snapshot " + idx(snapshot_index()));
  for (const auto& e : entries_) note_voters(e);
  persisted_ = last_index();
}

void raft_log::note_voters(const entry& e) {
  if (e.kind != entry_kind::voters) return;
  auto set = decode_voter_set(e.data);
  RAFT_INVARIANT(set.ok(), "entry " + idx(e.index) + ": " + (set ? "" : set.err().to_string()));
  configs_.emplace_back(e.index, std::move(*set));
}

const voter_set& raft_log::voters() const {
  return configs_.empty() ? snapshot_.voters : configs_.back().second;
}

const voter_set& raft_log::voters_at(log_index i) const {
  RAFT_INVARIANT(i >= snapshot_index() && i <= last_index(),
                 "voters at " + idx(i) + " of [" + idx(snapshot_index()) + ", " +
                     idx(last_index()) + "]");
  for (auto it = configs_.rbegin(); it != configs_.rend(); ++it)
    if (it->first <= i) return it->second;
  return snapshot_.voters;
}

std::vector<const voter_set*> raft_log::voter_sets_from(log_index i) const {
  std::vector<const voter_set*> sets{&voters_at(i)};
  for (const auto& [index, set] : configs_)
    if (index > i) sets.push_back(&set);
  return sets;
}

std::optional<log_index> raft_log::last_voters_index() const {
  if (configs_.empty()) return std::nullopt;
  return configs_.back().first;
}

raft_term raft_log::last_term() const {
  return entries_.empty() ? snapshot_term() : entries_.back().term;
}

std::optional<raft_term> raft_log::term_at(log_index i) const {
  if (i == snapshot_index()) return snapshot_term();
  if (i < first_index() || i > last_index()) return std::nullopt;
  return at(i).term;
}

const entry& raft_log::at(log_index i) const {
  RAFT_INVARIANT(i >= first_index() && i <= last_index(), "index " + idx(i) + " outside [" +
                                                              idx(first_index()) + ", " +
                                                              idx(last_index()) + "]");
  return entries_[i - first_index()];
}

std::span<const entry> raft_log::slice(log_index from, size_t max_entries, size_t max_bytes) const {
  RAFT_INVARIANT(from >= first_index(),
                 "slice from " + idx(from) + " below first index " + idx(first_index()));
  if (from > last_index()) return {};
  std::span<const entry> rest(entries_.begin() + static_cast<ptrdiff_t>(from - first_index()),
                              entries_.end());
  size_t n = 0;
  size_t bytes_taken = 0;
  while (n < rest.size() && n < max_entries) {
    bytes_taken += rest[n].data.size();
    if (n > 0 && bytes_taken > max_bytes) break;
    ++n;
  }
  return rest.first(n);
}

bool raft_log::is_up_to_date(log_index index, raft_term term) const {
  return term > last_term() || (term == last_term() && index >= last_index());
}

log_index raft_log::first_index_of_term_at(log_index i, log_index floor) const {
  RAFT_INVARIANT(snapshot_index() <= floor && floor < i && i <= last_index(),
                 "i " + idx(i) + ", floor " + idx(floor) + ", log (" + idx(snapshot_index()) +
                     ", " + idx(last_index()) + "]");
  const raft_term t = *term_at(i);
  while (i - 1 > floor && term_at(i - 1) == t) i = i - 1;
  return i;
}

std::optional<log_index> raft_log::last_index_of_term(raft_term t) const {
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    if (it->term == t) return it->index;
    if (it->term < t) return std::nullopt;
  }
  return std::nullopt;
}

void raft_log::append(entry e) {
  RAFT_INVARIANT(e.index == last_index() + 1 && e.term >= last_term(),
                 "appending (" + idx(e.index) + ", term " + std::to_string(e.term.value()) +
                     ") after (" + idx(last_index()) + ", term " +
                     std::to_string(last_term().value()) + ")");
  note_voters(e);
  entries_.push_back(std::move(e));
}

void raft_log::truncate_from(log_index i) {
  RAFT_INVARIANT(i > snapshot_index() && i <= last_index(), "truncate from " + idx(i) + " of (" +
                                                                idx(snapshot_index()) + ", " +
                                                                idx(last_index()) + "]");
  entries_.resize(i - first_index());
  while (!configs_.empty() && configs_.back().first >= i) configs_.pop_back();
  if (i <= persisted_) {
    truncated_from_ = std::min(truncated_from_.value_or(i), i);
    persisted_ = i - 1;
  }
}

void raft_log::install(snapshot snap) {
  RAFT_INVARIANT(snap.meta.index > snapshot_index(),
                 "installing snapshot " + idx(snap.meta.index) + " over " + idx(snapshot_index()));
  // Storage drops everything after its own snapshot before it writes this one, so that a crash
  // in between never leaves entries of a diverged history behind the new snapshot.
  truncated_from_ = std::min(truncated_from_.value_or(first_index()), first_index());
  entries_.clear();
  configs_.clear();
  snapshot_ = std::move(snap);
  snapshot_pending_ = true;
  persisted_ = snapshot_index();
}

void raft_log::compact(snapshot snap) {
  const log_index i = snap.meta.index;
  RAFT_INVARIANT(i > snapshot_index() && i <= last_index() && matches(i, snap.meta.term),
                 "compacting to (" + idx(i) + ", term " + std::to_string(snap.meta.term.value()) +
                     ") a log of (" + idx(snapshot_index()) + ", " + idx(last_index()) + "]");
  RAFT_INVARIANT(snap.voters == voters_at(i),
                 "a snapshot at " + idx(i) + " must hold the voters in effect there");
  entries_.erase(entries_.begin(),
                 entries_.begin() + static_cast<ptrdiff_t>(i - first_index() + 1));
  std::erase_if(configs_, [i](const auto& c) { return c.first <= i; });
  snapshot_ = std::move(snap);
  snapshot_pending_ = true;
}

bool raft_log::has_unpersisted() const {
  return truncated_from_ || snapshot_pending_ || persisted_ < last_index();
}

void raft_log::take_unpersisted(std::optional<log_index>& truncate_from,
                                std::optional<snapshot>& snap, std::vector<entry>& entries) {
  truncate_from = std::exchange(truncated_from_, std::nullopt);
  if (std::exchange(snapshot_pending_, false)) snap = snapshot_;
  const log_index from = std::max(persisted_ + 1, first_index());
  for (log_index i = from; i <= last_index(); ++i) entries.push_back(at(i));
  persisted_ = last_index();
}

} // namespace capstan::raft
