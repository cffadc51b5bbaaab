#include <catch2/catch.hpp>

#include <string>

#include "runtime/batch/record_batch_view.hpp"
#include "runtime/client/producer.hpp"
#include "runtime/client/record_accumulator.hpp"

using namespace capstan;
using namespace capstan::client;
using namespace std::chrono_literals;

namespace {

bytes_view as_bytes(const std::string& s) {
  return bytes_view(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

const auto all = [](const topic_partition_key&) { return 100; };

// The time the accumulator stamps new batches with, set by the test.
struct manual_clock {
  clock_type::time_point now = clock_type::now();
  std::function<clock_type::time_point()> reader() {
    return [this] { return now; };
  }
};

} // namespace

TEST_CASE("records accumulate into one valid batch per partition until linger passes",
          "[client][accumulator]") {
  manual_clock clock;
  record_accumulator acc(16384, 5ms, compression::none, clock.reader());
  const auto t0 = clock.now;
  const topic_partition_key p0{"t", 0}, p1{"t", 1};
  const std::string value(100, 'v');
  for (int i = 0; i < 10; ++i) {
    auto r = acc.append(i % 2 ? p1 : p0, std::nullopt, as_bytes(value), 1000 + i, {});
    CHECK(r.new_batch == (i < 2));
    CHECK_FALSE(r.closed_previous);
  }
  CHECK(acc.queued_bytes() > 1000);
  CHECK(acc.drain(t0 + 4ms, false, all).empty());
  REQUIRE(acc.next_deadline());
  CHECK(*acc.next_deadline() == t0 + 5ms);

  auto ready = acc.drain(t0 + 5ms, false, all);
  REQUIRE(ready.size() == 2);
  CHECK(acc.empty());
  CHECK(acc.queued_bytes() == 0);
  for (const auto& b : ready) {
    CHECK(b.records == 5);
    CHECK(b.callbacks.size() == 5);
    auto view = record_batch_view::parse(b.data, 1 << 20, batch_validation::produce);
    REQUIRE(view);
    CHECK(view->record_count() == 5);
    CHECK(view->base_timestamp() == (b.tp.partition == 0 ? 1000 : 1001));
  }
}

TEST_CASE("with a codec every batch is compressed and batch.size counts uncompressed bytes",
          "[client][accumulator]") {
  manual_clock clock;
  record_accumulator acc(1024, 1000ms, compression::lz4, clock.reader());
  const auto t0 = clock.now;
  const topic_partition_key tp{"t", 0};
  const std::string value(100, 'x');
  for (int i = 0; i < 30; ++i) acc.append(tp, std::nullopt, as_bytes(value), 1000 + i, {});
  auto ready = acc.drain(t0, true, all);
  REQUIRE(ready.size() > 1); // 30 x 100 bytes do not fit one 1024-byte batch before compression
  int records = 0;
  for (const auto& b : ready) {
    auto view = record_batch_view::parse(b.data, 1 << 20, batch_validation::produce);
    REQUIRE(view);
    CHECK(view->codec() == compression::lz4);
    CHECK(b.data.size() < 1024 / 2);
    records += view->record_count();
  }
  CHECK(records == 30);
}

TEST_CASE("a batch closes before it would pass batch.size and a full batch is ready at once",
          "[client][accumulator]") {
  manual_clock clock;
  record_accumulator acc(1024, 1000ms, compression::none, clock.reader());
  const auto t0 = clock.now;
  const topic_partition_key tp{"t", 0};
  const std::string value(100, 'x');
  int closes = 0;
  for (int i = 0; i < 30; ++i) {
    auto r = acc.append(tp, std::nullopt, as_bytes(value), 0, {});
    closes += r.closed_previous ? 1 : 0;
  }
  CHECK(closes >= 2);
  CHECK(acc.has_full_batch());
  auto ready = acc.drain(t0, false, all);
  REQUIRE(ready.size() == static_cast<size_t>(closes));
  int records = 0;
  for (const auto& b : ready) {
    CHECK(b.data.size() <= 1024);
    records += b.records;
  }
  CHECK_FALSE(acc.has_full_batch());
  auto rest = acc.drain(t0, true, all);
  REQUIRE(rest.size() == 1);
  CHECK(records + rest[0].records == 30);
}

TEST_CASE("a record larger than batch.size gets a batch of its own", "[client][accumulator]") {
  manual_clock clock;
  record_accumulator acc(256, 0ms, compression::none, clock.reader());
  const auto t0 = clock.now;
  const topic_partition_key tp{"t", 0};
  const std::string big(1000, 'b');
  const std::string small(10, 's');
  CHECK(acc.would_start_batch(tp, 0, small.size()));
  acc.append(tp, std::nullopt, as_bytes(small), 0, {});
  CHECK_FALSE(acc.would_start_batch(tp, 0, small.size()));
  CHECK(acc.would_start_batch(tp, 0, big.size()));
  auto r = acc.append(tp, std::nullopt, as_bytes(big), 0, {});
  CHECK(r.closed_previous);
  auto ready = acc.drain(t0, true, all);
  REQUIRE(ready.size() == 2);
  CHECK(ready[0].records == 1);
  CHECK(ready[1].records == 1);
  CHECK(ready[1].data.size() > 1000);
}

TEST_CASE("drain takes no more batches from a partition than its in-flight budget",
          "[client][accumulator]") {
  manual_clock clock;
  record_accumulator acc(200, 0ms, compression::none, clock.reader());
  const auto t0 = clock.now;
  const topic_partition_key tp{"t", 0};
  const std::string value(120, 'x');
  for (int i = 0; i < 5; ++i) acc.append(tp, std::nullopt, as_bytes(value), 0, {});
  auto one = acc.drain(t0, true, [](const topic_partition_key&) { return 2; });
  CHECK(one.size() == 2);
  auto none = acc.drain(t0, true, [](const topic_partition_key&) { return 0; });
  CHECK(none.empty());
  auto rest = acc.drain(t0, true, all);
  CHECK(rest.size() == 3);
  CHECK(acc.empty());
}

TEST_CASE("callbacks come out in record order with their batch", "[client][accumulator]") {
  manual_clock clock;
  record_accumulator acc(16384, 0ms, compression::none, clock.reader());
  const auto t0 = clock.now;
  std::vector<int> order;
  for (int i = 0; i < 4; ++i) {
    acc.append({"t", 0}, as_bytes("k" + std::to_string(i)), as_bytes("v"), 0,
               [&order, i](result<record_metadata>) { order.push_back(i); });
  }
  auto ready = acc.drain(t0, false, all);
  REQUIRE(ready.size() == 1);
  for (auto& cb : ready[0].callbacks) cb(record_metadata{});
  CHECK(order == std::vector<int>{0, 1, 2, 3});
}

TEST_CASE("batches older than delivery.timeout.ms expire unsent with their callbacks",
          "[client][accumulator]") {
  manual_clock clock;
  record_accumulator acc(100, 1000ms, compression::none, clock.reader());
  const auto t0 = clock.now;
  const std::string value(60, 'x');
  int called = 0;
  acc.append({"t", 0}, std::nullopt, as_bytes(value), 0,
             [&](result<record_metadata>) { ++called; });
  clock.now = t0 + 50ms;
  acc.append({"t", 0}, std::nullopt, as_bytes(value), 0, {});
  acc.append({"t", 1}, std::nullopt, as_bytes(value), 0, {});
  CHECK(acc.expire(t0 + 99ms, 100ms).empty());
  auto expired = acc.expire(t0 + 100ms, 100ms);
  REQUIRE(expired.size() == 1);
  CHECK(expired[0].tp.partition == 0);
  CHECK(expired[0].records == 1);
  for (auto& cb : expired[0].callbacks) cb(make_error(errc::request_timed_out, "expired"));
  CHECK(called == 1);
  CHECK_FALSE(acc.empty());
  CHECK(acc.expire(t0 + 150ms, 100ms).size() == 2);
  CHECK(acc.empty());
  CHECK(acc.queued_bytes() == 0);
  CHECK_FALSE(acc.has_full_batch());
}

TEST_CASE("an open batch grows past batch.size up to the limit given, and is ready from "
          "batch.size on",
          "[client][accumulator]") {
  manual_clock clock;
  record_accumulator acc(1024, 1000ms, compression::none, clock.reader());
  const auto t0 = clock.now;
  const topic_partition_key tp{"t", 0};
  const std::string value(100, 'x');
  constexpr size_t limit = 4096;
  constexpr int appended = 30; // about 3,300 bytes
  for (int i = 0; i < appended; ++i) {
    auto r = acc.append(tp, std::nullopt, as_bytes(value), 0, {}, limit);
    CHECK_FALSE(r.closed_previous);
  }
  // Lingering does not hold back a batch past batch.size.
  auto grown = acc.drain(t0, false, all);
  REQUIRE(grown.size() == 1);
  CHECK(grown[0].records == appended);
  CHECK(grown[0].data.size() > 1024 * 3);
  CHECK(grown[0].data.size() <= limit);

  // Given batch.size again (the partition can send), a batch grown past it closes at once.
  for (int i = 0; i < 20; ++i) acc.append(tp, std::nullopt, as_bytes(value), 0, {}, limit);
  auto r = acc.append(tp, std::nullopt, as_bytes(value), 0, {});
  CHECK(r.closed_previous);
  auto ready = acc.drain(t0, false, all);
  REQUIRE(ready.size() == 1);
  CHECK(ready[0].records == 20);
  CHECK(acc.drain(t0 + 1000ms, false, all).size() == 1);
}

TEST_CASE("a batch is stamped when its first record arrives, and only then is the clock read",
          "[client][accumulator]") {
  int reads = 0;
  auto now = clock_type::now();
  const auto t0 = now;
  record_accumulator acc(16384, 5ms, compression::none, [&] {
    ++reads;
    return now;
  });
  const std::string value(10, 'x');
  for (int i = 0; i < 10; ++i) {
    acc.append({"t", 0}, std::nullopt, as_bytes(value), 0, {});
    now += 1ms;
  }
  CHECK(reads == 1);
  REQUIRE(acc.next_deadline());
  CHECK(*acc.next_deadline() == t0 + 5ms);
}
