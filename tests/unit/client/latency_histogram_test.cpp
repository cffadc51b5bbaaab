#include <catch2/catch.hpp>

#include <random>

#include "runtime/client/latency_histogram.hpp"

using namespace capstan::client;

TEST_CASE("histogram percentiles of 1..10000 are within the bucket precision", "[client][histogram]") {
  latency_histogram h;
  for (int64_t v = 1; v <= 10000; ++v) h.record(v);
  CHECK(h.count() == 10000);
  CHECK(h.max() == 10000);
  CHECK(h.min() == 1);
  CHECK(h.mean() == Approx(5000.5));
  auto within = [](int64_t got, double want) {
    return got >= want && static_cast<double>(got) <= want * (1.0 + 1.0 / 64) + 1;
  };
  CHECK(within(h.percentile(0.5), 5000));
  CHECK(within(h.percentile(0.99), 9900));
  CHECK(within(h.percentile(0.999), 9990));
  CHECK(h.percentile(1.0) == 10000);
}

TEST_CASE("histogram values below 128 are exact", "[client][histogram]") {
  latency_histogram h;
  for (int i = 0; i < 90; ++i) h.record(3);
  for (int i = 0; i < 10; ++i) h.record(100);
  CHECK(h.percentile(0.5) == 3);
  CHECK(h.percentile(0.9) == 3);
  CHECK(h.percentile(0.91) == 100);
  CHECK(h.percentile(0.999) == 100);
}

TEST_CASE("histogram buckets cover every value with bounded relative error", "[client][histogram]") {
  std::mt19937_64 rng(3);
  for (int i = 0; i < 100000; ++i) {
    const uint64_t v = rng() >> (rng() % 64);
    const size_t b = latency_histogram::bucket_of(v);
    const uint64_t upper = latency_histogram::bucket_upper(b);
    REQUIRE(upper >= v);
    REQUIRE(static_cast<double>(upper - v) <= static_cast<double>(v) / 64.0 + 1.0);
    if (b > 0) REQUIRE(latency_histogram::bucket_upper(b - 1) < v);
  }
}

TEST_CASE("merged histograms answer as one, and an empty one answers zero", "[client][histogram]") {
  latency_histogram a, b, empty;
  for (int i = 0; i < 50; ++i) a.record(10);
  for (int i = 0; i < 50; ++i) b.record(1000);
  a.merge(b);
  a.merge(empty);
  CHECK(a.count() == 100);
  CHECK(a.percentile(0.5) == 10);
  CHECK(a.percentile(0.99) >= 1000);
  CHECK(a.max() == 1000);
  CHECK(empty.percentile(0.99) == 0);
  CHECK(empty.mean() == 0.0);
  a.reset();
  CHECK(a.count() == 0);
  CHECK(a.percentile(0.5) == 0);
}
