#pragma once

// How the seeded simulations (raft_simulation, controller_simulation) pick their steps: each kind
// of step has a weight, drawn per seed as its base weight times 1 to 8, and storms (every kind)
// alternate with calm stretches (only the first kinds, those that make progress), so that a calm
// stretch builds up state for the next storm to break.

#include <array>
#include <cassert>
#include <cstddef>
#include <cstdint>

namespace capstan::raft::test {

// `pick(n)` draws from [0, n) of the seed's generator.
template <size_t N, class Pick>
std::array<uint32_t, N> draw_step_weights(const std::array<uint32_t, N>& base, Pick&& pick) {
  std::array<uint32_t, N> weights{};
  for (size_t k = 0; k < N; ++k) weights[k] = base[k] * static_cast<uint32_t>(1 + pick(8));
  return weights;
}

// The kind of the next step: `calm` flips with probability 1 / `switch_every`, then the kind is
// drawn by weight among all kinds, or the first `calm_kinds` while calm.
// REQUIRES: the first `calm_kinds` weights are not all 0.
template <size_t N, class Pick>
size_t next_step_kind(const std::array<uint32_t, N>& weights, size_t calm_kinds,
                      uint64_t switch_every, bool& calm, Pick&& pick) {
  if (pick(switch_every) == 0) calm = !calm;
  const size_t kinds = calm ? calm_kinds : N;
  uint64_t total = 0;
  for (size_t k = 0; k < kinds; ++k) total += weights[k];
  assert(total > 0);
  uint64_t x = pick(total);
  for (size_t k = 0; k < kinds; ++k) {
    if (x < weights[k]) return k;
    x -= weights[k];
  }
  return kinds - 1;
}

} // namespace capstan::raft::test
