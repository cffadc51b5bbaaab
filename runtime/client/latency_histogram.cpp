#include "runtime/client/latency_histogram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace capstan::client {

namespace {

constexpr unsigned sub_bits = 6;                   // 64 sub-buckets per power of two
constexpr uint64_t linear_limit = uint64_t{2} << sub_bits; // values below 128 are exact
constexpr size_t half = size_t{1} << sub_bits;
// Exponents 1..57 cover values up to 2^64 - 1.
constexpr size_t bucket_count = linear_limit + (64 - sub_bits - 1) * half;

} // namespace

latency_histogram::latency_histogram() : counts_(bucket_count, 0) {}

size_t latency_histogram::bucket_of(uint64_t value) {
  if (value < linear_limit) return static_cast<size_t>(value);
  // shift >= 1 such that value >> shift is in [64, 128).
  const unsigned shift = static_cast<unsigned>(std::bit_width(value)) - sub_bits - 1;
  return linear_limit + (shift - 1) * half + static_cast<size_t>((value >> shift) - half);
}

uint64_t latency_histogram::bucket_upper(size_t bucket) {
  if (bucket < linear_limit) return bucket;
  const size_t shift = (bucket - linear_limit) / half + 1;
  const uint64_t sub = (bucket - linear_limit) % half + half;
  return ((sub + 1) << shift) - 1;
}

void latency_histogram::record(int64_t value) {
  value = std::max<int64_t>(value, 0);
  ++counts_[bucket_of(static_cast<uint64_t>(value))];
  if (count_ == 0 || value < min_) min_ = value;
  max_ = std::max(max_, value);
  ++count_;
  sum_ += value;
}

void latency_histogram::merge(const latency_histogram& other) {
  if (other.count_ == 0) return;
  for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  min_ = count_ == 0 ? other.min_ : std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  count_ += other.count_;
  sum_ += other.sum_;
}

void latency_histogram::reset() {
  std::fill(counts_.begin(), counts_.end(), 0);
  count_ = 0;
  sum_ = 0;
  max_ = 0;
  min_ = 0;
}

int64_t latency_histogram::percentile(double q) const {
  if (count_ == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  const auto rank = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(q * static_cast<double>(count_))));
  uint64_t seen = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= rank) return std::min<int64_t>(static_cast<int64_t>(bucket_upper(i)), max_);
  }
  return max_;
}

} // namespace capstan::client
