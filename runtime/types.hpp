#pragma once

// Strong types that keep offsets, epochs and ids apart (a leader epoch is never an offset).

#include <array>
#include <compare>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace capstan {

template <class T, class Tag>
class strong {
public:
  using value_type = T;
  constexpr strong() = default;
  constexpr explicit strong(T v) : v_(v) {}
  constexpr T value() const { return v_; }
  constexpr auto operator<=>(const strong&) const = default;

  // CAF serialization (caf::inspect finds this by ADL on the derived strong types too).
  template <class Inspector>
  friend typename Inspector::result_type inspect(Inspector& f, strong& x) {
    return f(x.v_);
  }

private:
  T v_{};
};

// Position of a record in a partition log.
struct offset : strong<int64_t, struct offset_tag> {
  using strong::strong;
  constexpr offset operator+(int64_t d) const { return offset{value() + d}; }
  constexpr offset operator-(int64_t d) const { return offset{value() - d}; }
  constexpr int64_t operator-(offset o) const { return value() - o.value(); }
  constexpr offset& operator++() { *this = offset{value() + 1}; return *this; }
};
using leader_epoch = strong<int32_t, struct leader_epoch_tag>;
using node_id = strong<int32_t, struct node_id_tag>;
using partition_id = strong<int32_t, struct partition_id_tag>;

// Milliseconds since the Unix epoch, as in Kafka's record timestamps.
using timestamp_ms = int64_t;

// Kafka's "no timestamp" marker.
inline constexpr timestamp_ms no_timestamp = -1;

using bytes_view = std::span<const uint8_t>;
using bytes = std::vector<uint8_t>;

// A node process's incarnation id: 16 random bytes drawn at its start, named in its registration
// with the controller; all zeros: none or unknown.
using incarnation_bytes = std::array<uint8_t, 16>;

} // namespace capstan

template <>
struct std::hash<capstan::offset> {
  size_t operator()(capstan::offset o) const noexcept { return std::hash<int64_t>{}(o.value()); }
};
