#pragma once

// Process metrics in Prometheus' data model (docs/metrics.md): counters, gauges and latency
// histograms, each a family (name, help, type) of series told apart by labels. Updating a series
// is lock-free (atomics) and safe from any thread, so the RPC thread and actors share one
// registry; only creating a series and rendering take the registry's mutex.
//
// Series handed out by counter()/gauge()/histogram() live as long as the registry (references
// stay valid; a series is never removed). Values that are recomputed as a whole (per-partition
// gauges) go through set_gauge_family(), which replaces every series of the family at once.

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace capstan {

// Label pairs in the order given; names must match [a-zA-Z_][a-zA-Z0-9_]*, values are escaped
// when rendered.
using metric_labels = std::vector<std::pair<std::string, std::string>>;

class metric_counter {
public:
  void inc(uint64_t n = 1) { v_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t value() const { return v_.load(std::memory_order_relaxed); }

private:
  std::atomic<uint64_t> v_{0};
};

class metric_gauge {
public:
  void set(int64_t v) { v_.store(v, std::memory_order_relaxed); }
  void add(int64_t d) { v_.fetch_add(d, std::memory_order_relaxed); }
  int64_t value() const { return v_.load(std::memory_order_relaxed); }

private:
  std::atomic<int64_t> v_{0};
};

// Fixed log-scale buckets in seconds: upper bounds 100 us * 2^k for k = 0..bucket_count-1
// (100 us .. ~105 s), then +Inf. Fixed so every histogram of a family aggregates.
class metric_histogram {
public:
  static constexpr size_t bucket_count = 21;
  static constexpr double first_bound_seconds = 0.0001;

  // Upper bound of bucket i in seconds. REQUIRES: i < bucket_count.
  static double bound(size_t i);

  void observe_micros(uint64_t micros);
  void observe_seconds(double seconds);

  uint64_t count() const { return count_.load(std::memory_order_relaxed); }
  double sum_seconds() const;
  // Observations in bucket i alone (not cumulative); i == bucket_count is the +Inf bucket.
  uint64_t bucket(size_t i) const { return buckets_[i].load(std::memory_order_relaxed); }

private:
  std::array<std::atomic<uint64_t>, bucket_count + 1> buckets_{};
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_micros_{0};
};

class metrics_registry {
public:
  metrics_registry();
  metrics_registry(const metrics_registry&) = delete;
  metrics_registry& operator=(const metrics_registry&) = delete;
  metrics_registry(metrics_registry&&) = delete;
  metrics_registry& operator=(metrics_registry&&) = delete;
  ~metrics_registry();

  // The series of family `name` with `labels`, created on first use. The first call for a name
  // fixes its help text and type. REQUIRES: a name is used with one type only (a mismatch
  // returns a detached series that is never rendered, rather than corrupting the family).
  metric_counter& counter(const std::string& name, const std::string& help,
                          const metric_labels& labels = {});
  metric_gauge& gauge(const std::string& name, const std::string& help,
                      const metric_labels& labels = {});
  metric_histogram& histogram(const std::string& name, const std::string& help,
                              const metric_labels& labels = {});

  // Replaces every series of gauge family `name` with `samples` (series absent from `samples`
  // disappear). For values recomputed as a whole, such as one gauge per partition.
  void set_gauge_family(const std::string& name, const std::string& help,
                        std::vector<std::pair<metric_labels, int64_t>> samples);

  // Prometheus text exposition format 0.0.4, families sorted by name.
  std::string render() const;

private:
  enum class kind { counter, gauge, histogram, gauge_snapshot };
  struct family;

  family& family_of(const std::string& name, const std::string& help, kind k);

  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<family>> families_;
  // Series returned on a type mismatch; kept so references stay valid.
  std::vector<std::unique_ptr<metric_counter>> detached_counters_;
  std::vector<std::unique_ptr<metric_gauge>> detached_gauges_;
  std::vector<std::unique_ptr<metric_histogram>> detached_histograms_;
};

// Renders labels as {a="x",b="y"} (empty string for none), escaping \, " and newlines.
std::string render_metric_labels(const metric_labels& labels);

} // namespace capstan
