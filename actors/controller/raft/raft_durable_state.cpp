#include "actors/controller/raft/raft_durable_state.hpp"

#include <string>

#include "actors/controller/raft/raft_invariant.hpp"

namespace capstan::raft {

void durable_state::truncate_from(log_index i) {
  RAFT_INVARIANT(i > snap.meta.index, "truncate from " + std::to_string(i.value()) +
                                          " at or below snapshot " +
                                          std::to_string(snap.meta.index.value()));
  if (i <= last_index()) entries.resize(i - (snap.meta.index + 1));
}

void durable_state::save_snapshot(snapshot s) {
  RAFT_INVARIANT(s.meta.index > snap.meta.index,
                 "snapshot " + std::to_string(s.meta.index.value()) + " over " +
                     std::to_string(snap.meta.index.value()));
  if (s.meta.index >= last_index())
    entries.clear();
  else
    entries.erase(entries.begin(),
                  entries.begin() + static_cast<ptrdiff_t>(s.meta.index - snap.meta.index));
  snap = std::move(s);
}

void durable_state::append(std::span<const entry> es) {
  for (const auto& e : es) {
    RAFT_INVARIANT(e.index == last_index() + 1, "appending " + std::to_string(e.index.value()) +
                                                    " after " +
                                                    std::to_string(last_index().value()));
    entries.push_back(e);
  }
}

} // namespace capstan::raft
