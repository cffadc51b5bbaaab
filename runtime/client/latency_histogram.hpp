#pragma once

// A latency histogram in the manner of HdrHistogram: log-linear buckets (every power of two split
// into 64 linear sub-buckets, values below 128 exact), so a percentile is read by walking bucket
// counts, never by sorting samples, and memory stays fixed (~3,600 counters for values up to
// 2^63). A reported value is within 1/64 (1.6%) of a sample that fell in its bucket.
// Not thread-safe: one writer, or the caller's lock.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace capstan::client {

class latency_histogram {
public:
  latency_histogram();

  // Records one value (any unit; perf uses microseconds). Negative values count as 0.
  void record(int64_t value);
  // Adds every sample of `other`.
  void merge(const latency_histogram& other);
  void reset();

  uint64_t count() const { return count_; }
  int64_t max() const { return max_; }
  int64_t min() const { return count_ ? min_ : 0; }
  double mean() const { return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0.0; }
  // The smallest bucket bound v such that at least q of the samples are <= v (the highest value
  // equivalent to that bucket, capped at max()). 0 when empty. q in [0, 1].
  int64_t percentile(double q) const;

  // Bucket arithmetic, exposed for tests.
  static size_t bucket_of(uint64_t value);
  static uint64_t bucket_upper(size_t bucket);

private:
  std::vector<uint64_t> counts_;
  uint64_t count_ = 0;
  int64_t sum_ = 0;
  int64_t max_ = 0;
  int64_t min_ = 0;
};

} // namespace capstan::client
