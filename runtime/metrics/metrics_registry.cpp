#include "runtime/metrics/metrics_registry.hpp"

#include <cmath>

#include <fmt/format.h>

namespace capstan {

double metric_histogram::bound(size_t i) {
  return std::ldexp(first_bound_seconds, static_cast<int>(i));
}

void metric_histogram::observe_micros(uint64_t micros) {
  // Bucket i holds (bound(i-1), bound(i)]; bounds double, so the index is a base-2 logarithm.
  size_t i = 0;
  uint64_t limit = static_cast<uint64_t>(first_bound_seconds * 1e6);
  while (i < bucket_count && micros > limit) {
    limit *= 2;
    ++i;
  }
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_micros_.fetch_add(micros, std::memory_order_relaxed);
}

void metric_histogram::observe_seconds(double seconds) {
  observe_micros(seconds <= 0 ? 0 : static_cast<uint64_t>(std::llround(seconds * 1e6)));
}

double metric_histogram::sum_seconds() const {
  return static_cast<double>(sum_micros_.load(std::memory_order_relaxed)) / 1e6;
}

struct metrics_registry::family {
  std::string help;
  kind type;
  // Keyed by rendered labels, so the same labels in the same order name the same series.
  std::map<std::string, std::unique_ptr<metric_counter>> counters;
  std::map<std::string, std::unique_ptr<metric_gauge>> gauges;
  std::map<std::string, std::unique_ptr<metric_histogram>> histograms;
  std::map<std::string, int64_t> snapshot;
};

metrics_registry::metrics_registry() = default;
metrics_registry::~metrics_registry() = default;

std::string render_metric_labels(const metric_labels& labels) {
  if (labels.empty()) return {};
  std::string out = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i > 0) out += ',';
    out += labels[i].first;
    out += "=\"";
    for (char c : labels[i].second) {
      switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
      }
    }
    out += '"';
  }
  out += '}';
  return out;
}

metrics_registry::family& metrics_registry::family_of(const std::string& name,
                                                      const std::string& help, kind k) {
  auto& f = families_[name];
  if (!f) f = std::make_unique<family>(family{help, k, {}, {}, {}, {}});
  return *f;
}

metric_counter& metrics_registry::counter(const std::string& name, const std::string& help,
                                          const metric_labels& labels) {
  std::lock_guard<std::mutex> guard{mu_};
  auto& f = family_of(name, help, kind::counter);
  if (f.type != kind::counter)
    return *detached_counters_.emplace_back(std::make_unique<metric_counter>());
  auto& s = f.counters[render_metric_labels(labels)];
  if (!s) s = std::make_unique<metric_counter>();
  return *s;
}

metric_gauge& metrics_registry::gauge(const std::string& name, const std::string& help,
                                      const metric_labels& labels) {
  std::lock_guard<std::mutex> guard{mu_};
  auto& f = family_of(name, help, kind::gauge);
  if (f.type != kind::gauge)
    return *detached_gauges_.emplace_back(std::make_unique<metric_gauge>());
  auto& s = f.gauges[render_metric_labels(labels)];
  if (!s) s = std::make_unique<metric_gauge>();
  return *s;
}

metric_histogram& metrics_registry::histogram(const std::string& name, const std::string& help,
                                              const metric_labels& labels) {
  std::lock_guard<std::mutex> guard{mu_};
  auto& f = family_of(name, help, kind::histogram);
  if (f.type != kind::histogram)
    return *detached_histograms_.emplace_back(std::make_unique<metric_histogram>());
  auto& s = f.histograms[render_metric_labels(labels)];
  if (!s) s = std::make_unique<metric_histogram>();
  return *s;
}

void metrics_registry::set_gauge_family(const std::string& name, const std::string& help,
                                        std::vector<std::pair<metric_labels, int64_t>> samples) {
  std::map<std::string, int64_t> snapshot;
  for (auto& [labels, value] : samples) snapshot[render_metric_labels(labels)] = value;
  std::lock_guard<std::mutex> guard{mu_};
  auto& f = family_of(name, help, kind::gauge_snapshot);
  if (f.type != kind::gauge_snapshot) return;
  f.snapshot = std::move(snapshot);
}

namespace {

// Inserts `extra` (e.g. le="0.1") into rendered labels.
std::string with_label(const std::string& labels, const std::string& extra) {
  if (labels.empty()) return "{" + extra + "}";
  return labels.substr(0, labels.size() - 1) + "," + extra + "}";
}

} // namespace

std::string metrics_registry::render() const {
  std::lock_guard<std::mutex> guard{mu_};
  std::string out;
  for (const auto& [name, f] : families_) {
    const char* type = f->type == kind::counter     ? "counter"
                       : f->type == kind::histogram ? "histogram"
                                                    : "gauge";
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, f->help, name, type);
    for (const auto& [labels, c] : f->counters)
      out += fmt::format("{}{} {}\n", name, labels, c->value());
    for (const auto& [labels, g] : f->gauges)
      out += fmt::format("{}{} {}\n", name, labels, g->value());
    for (const auto& [labels, v] : f->snapshot) out += fmt::format("{}{} {}\n", name, labels, v);
    for (const auto& [labels, h] : f->histograms) {
      // Read each bucket once; count is their sum, so the +Inf bucket equals _count even while
      // observations race with rendering.
      uint64_t cumulative = 0;
      for (size_t i = 0; i < metric_histogram::bucket_count; ++i) {
        cumulative += h->bucket(i);
        out += fmt::format("{}_bucket{} {}\n", name,
                           with_label(labels, fmt::format("le=\"{}\"", metric_histogram::bound(i))),
                           cumulative);
      }
      cumulative += h->bucket(metric_histogram::bucket_count);
      out += fmt::format("{}_bucket{} {}\n", name, with_label(labels, "le=\"+Inf\""), cumulative);
      out += fmt::format("{}_sum{} {}\n", name, labels, h->sum_seconds());
      out += fmt::format("{}_count{} {}\n", name, labels, cumulative);
    }
  }
  return out;
}

} // namespace capstan
