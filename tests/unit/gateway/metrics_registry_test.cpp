#include "runtime/metrics/metrics_registry.hpp"

#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

using namespace capstan;

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

} // namespace

TEST_CASE("counters and gauges render in Prometheus text format", "[gateway][metrics]") {
  metrics_registry r;
  r.counter("capstan_requests_total", "Requests", {{"method", "produce"}}).inc(3);
  r.counter("capstan_requests_total", "Requests", {{"method", "fetch"}}).inc();
  r.gauge("capstan_partitions", "Partitions").set(7);
  auto text = r.render();
  CHECK(contains(text, "# HELP capstan_requests_total Requests\n"));
  CHECK(contains(text, "# TYPE capstan_requests_total counter\n"));
  CHECK(contains(text, "capstan_requests_total{method=\"produce\"} 3\n"));
  CHECK(contains(text, "capstan_requests_total{method=\"fetch\"} 1\n"));
  CHECK(contains(text, "# TYPE capstan_partitions gauge\ncapstan_partitions 7\n"));
}

TEST_CASE("the same name and labels give the same series", "[gateway][metrics]") {
  metrics_registry r;
  auto& a = r.counter("c", "h", {{"x", "1"}});
  auto& b = r.counter("c", "h", {{"x", "1"}});
  CHECK(&a == &b);
  CHECK(&a != &r.counter("c", "h", {{"x", "2"}}));
  // A name reused with another type gets a detached series: never rendered, never a crash.
  r.gauge("c", "h").set(5);
  CHECK_FALSE(contains(r.render(), "c 5"));
}

TEST_CASE("label values are escaped", "[gateway][metrics]") {
  CHECK(render_metric_labels({{"a", "x\"y\\z\nw"}}) == "{a=\"x\\\"y\\\\z\\nw\"}");
  CHECK(render_metric_labels({}).empty());
}

TEST_CASE("histogram buckets are log-scale, cumulative and end with +Inf", "[gateway][metrics]") {
  metrics_registry r;
  auto& h = r.histogram("lat_seconds", "Latency", {{"method", "produce"}});
  h.observe_micros(50);    // <= 100 us
  h.observe_micros(100);   // <= 100 us (bounds are inclusive)
  h.observe_micros(150);   // <= 200 us
  h.observe_seconds(1000); // beyond the last bound
  CHECK(h.count() == 4);
  CHECK(metric_histogram::bound(0) == Approx(0.0001));
  CHECK(metric_histogram::bound(1) == Approx(0.0002));
  auto text = r.render();
  CHECK(contains(text, "# TYPE lat_seconds histogram\n"));
  CHECK(contains(text, "lat_seconds_bucket{method=\"produce\",le=\"0.0001\"} 2\n"));
  CHECK(contains(text, "lat_seconds_bucket{method=\"produce\",le=\"0.0002\"} 3\n"));
  CHECK(contains(text, "lat_seconds_bucket{method=\"produce\",le=\"+Inf\"} 4\n"));
  CHECK(contains(text, "lat_seconds_count{method=\"produce\"} 4\n"));
  CHECK(contains(text, "lat_seconds_sum{method=\"produce\"} 1000.0003\n"));
}

TEST_CASE("a gauge family is replaced as a whole", "[gateway][metrics]") {
  metrics_registry r;
  r.set_gauge_family("log_size", "Bytes", {{{{"topic", "a"}}, 10}, {{{"topic", "b"}}, 20}});
  CHECK(contains(r.render(), "log_size{topic=\"b\"} 20\n"));
  r.set_gauge_family("log_size", "Bytes", {{{{"topic", "a"}}, 11}});
  auto text = r.render();
  CHECK(contains(text, "log_size{topic=\"a\"} 11\n"));
  CHECK_FALSE(contains(text, "topic=\"b\""));
}

TEST_CASE("concurrent updates are all counted", "[gateway][metrics]") {
  metrics_registry r;
  auto& c = r.counter("n", "h");
  auto& h = r.histogram("t", "h");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        c.inc();
        h.observe_micros(static_cast<uint64_t>(i));
        r.counter("m", "h", {{"k", std::to_string(i % 3)}}).inc();
      }
    });
  for (auto& t : threads) t.join();
  CHECK(c.value() == 40000);
  CHECK(h.count() == 40000);
  CHECK(contains(r.render(), "t_count 40000\n"));
}
