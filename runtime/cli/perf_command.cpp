#include "runtime/cli/perf_command.hpp"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include <CLI/CLI.hpp>

#include "runtime/cli/client_options.hpp"
#include "runtime/cli/exit_codes.hpp"
#include "runtime/cli/option_checks.hpp"
#include "runtime/cli/produce_command.hpp"
#include "runtime/client/consumer.hpp"
#include "runtime/client/latency_histogram.hpp"
#include "runtime/client/producer.hpp"

namespace capstan::cli {

namespace {

using steady = std::chrono::steady_clock;
constexpr double mib = 1024.0 * 1024.0;

struct perf_produce_flags {
  client_options client;
  std::string topic;
  int64_t records = 0;
  int32_t record_size = 100;
  std::string acks = "all";
  int64_t throughput = -1;
  int32_t batch_size = 16384;
  int64_t linger_ms = 5;
  int32_t max_in_flight = 5;
  int64_t buffer_memory = 33554432;
  int64_t report_interval_ms = 5000;
};

struct perf_consume_flags {
  client_options client;
  std::string topic;
  int64_t records = 0;
  int64_t timeout_ms = 10000;
  int32_t fetch_size = 1048576;
};

double seconds_since(steady::time_point t) {
  return std::chrono::duration<double>(steady::now() - t).count();
}

// Latency statistics written by the client thread (acknowledgements) and read by the sending
// thread (reports); both take the lock. Latencies are in microseconds.
struct produce_stats {
  std::mutex mu;
  client::latency_histogram total;
  client::latency_histogram window;
  uint64_t window_bytes = 0;
  uint64_t record_size = 0;
  uint64_t failed = 0;
  std::optional<error> first_error;
  steady::time_point window_start = steady::now();

  void acknowledged(int64_t latency_us) {
    std::lock_guard lock(mu);
    total.record(latency_us);
    window.record(latency_us);
    window_bytes += record_size;
  }
  void failure(const error& e) {
    std::lock_guard lock(mu);
    ++failed;
    if (!first_error) first_error = e;
  }
  // "N records sent, X records/sec (Y MB/sec), A ms avg latency, M ms max latency." for the
  // window since the last report.
  void report_window() {
    std::lock_guard lock(mu);
    const double secs = seconds_since(window_start);
    std::printf("%llu records sent, %.1f records/sec (%.2f MB/sec), %.1f ms avg latency, %.1f ms max latency.\n",
                static_cast<unsigned long long>(window.count()), static_cast<double>(window.count()) / secs,
                static_cast<double>(window_bytes) / mib / secs, window.mean() / 1000.0,
                static_cast<double>(window.max()) / 1000.0);
    std::fflush(stdout);
    window.reset();
    window_bytes = 0;
    window_start = steady::now();
  }
};

// Kafka's ThroughputThrottler: sleeps so that `sent` records took at least sent / target seconds.
class throttler {
public:
  throttler(int64_t target_per_sec, steady::time_point start) : target_(target_per_sec), start_(start) {}
  void pace(int64_t sent) {
    if (target_ <= 0) return;
    const auto due = start_ + std::chrono::microseconds(sent * 1000000 / target_);
    if (due > steady::now()) std::this_thread::sleep_until(due);
  }

private:
  int64_t target_;
  steady::time_point start_;
};

void run_perf_produce(const perf_produce_flags& f) {
  auto acks = parse_acks(f.acks);
  if (!acks) fail("--acks must be 0, 1 or all, not '" + f.acks + "'", exit_usage);
  auto config = make_client_config(f.client);
  config.acks = *acks;
  config.batch_size = f.batch_size;
  config.linger_ms = f.linger_ms;
  config.max_in_flight = f.max_in_flight;
  config.buffer_memory = f.buffer_memory;
  auto client = connect_or_fail(config);
  if (auto md = client->metadata({f.topic}); !md) fail(md.err());

  // Random upper-case letters, as kafka-producer-perf-test's default payload.
  bytes payload(static_cast<size_t>(f.record_size));
  std::mt19937 rng(1);
  for (auto& b : payload) b = static_cast<uint8_t>('A' + rng() % 26);
  const bytes_view value(payload);

  produce_stats stats;
  stats.record_size = static_cast<uint64_t>(f.record_size);
  const auto start = steady::now();
  throttler throttle(f.throughput, start);
  auto next_report = start + std::chrono::milliseconds(f.report_interval_ms);
  {
    client::producer producer(*client, config);
    for (int64_t i = 0; i < f.records; ++i) {
      const auto sent_at = steady::now();
      // Two words of capture: stays inside std::function's small buffer (no allocation).
      producer.send(f.topic, std::nullopt, value, std::nullopt,
                    [stats = &stats, sent_at](capstan::result<client::record_metadata> r) {
                      if (!r) {
                        stats->failure(r.err());
                        return;
                      }
                      const auto latency = std::chrono::duration_cast<std::chrono::microseconds>(steady::now() - sent_at);
                      stats->acknowledged(latency.count());
                    });
      if ((i & 1023) == 0) {
        if (sent_at >= next_report) {
          stats.report_window();
          next_report = sent_at + std::chrono::milliseconds(f.report_interval_ms);
        }
      }
      throttle.pace(i + 1);
    }
    producer.flush();
  }
  const double secs = seconds_since(start);
  std::lock_guard lock(stats.mu);
  const auto& h = stats.total;
  const auto n = static_cast<double>(h.count());
  auto ms = [](int64_t us) { return static_cast<double>(us) / 1000.0; };
  std::printf("%llu records sent, %.1f records/sec (%.2f MB/sec), %.2f ms avg latency, %.2f ms max latency, "
              "%.2f ms 50th, %.2f ms 95th, %.2f ms 99th, %.2f ms 99.9th.\n",
              static_cast<unsigned long long>(h.count()), n / secs, n * f.record_size / mib / secs,
              h.mean() / 1000.0, ms(h.max()), ms(h.percentile(0.5)), ms(h.percentile(0.95)),
              ms(h.percentile(0.99)), ms(h.percentile(0.999)));
  std::fflush(stdout);
  if (stats.failed > 0)
    fail(std::to_string(stats.failed) + " records failed; first error: " + stats.first_error->to_string(),
         exit_failed);
}

void run_perf_consume(const perf_consume_flags& f) {
  auto config = make_client_config(f.client);
  config.max_partition_fetch_bytes = f.fetch_size;
  auto client = connect_or_fail(config);
  client::consumer consumer(*client, config);
  if (auto s = consumer.assign(f.topic); !s) fail(s.err());
  if (auto s = consumer.seek_to_beginning(); !s) fail(s.err());

  const auto start = steady::now();
  uint64_t records = 0;
  uint64_t payload = 0;
  const auto want = static_cast<uint64_t>(f.records);
  while (records < want) {
    auto n = consumer.poll_each(
        std::chrono::milliseconds(f.timeout_ms),
        [&](const client::record_ref& r) {
          payload += r.record.value ? r.record.value->size() : 0;
          payload += r.record.key ? r.record.key->size() : 0;
        },
        want - records);
    if (!n) fail(n.err());
    if (*n == 0) {
      std::cerr << "warning: nothing new for " << f.timeout_ms << " ms; stopping after " << records
                << " records" << std::endl;
      break;
    }
    records += *n;
  }
  const double secs = seconds_since(start);
  std::printf("%llu records received, %.1f records/sec (%.2f MB/sec), %.2f MB in %.3f s.\n",
              static_cast<unsigned long long>(records), static_cast<double>(records) / secs,
              static_cast<double>(payload) / mib / secs, static_cast<double>(payload) / mib, secs);
  std::fflush(stdout);
  if (records < want) throw CLI::RuntimeError(exit_failed);
}

} // namespace

void add_perf_command(CLI::App& app) {
  auto* perf = app.add_subcommand("perf", "Measure produce and consume throughput against a running cluster");
  perf->require_subcommand(1);

  auto p = std::make_shared<perf_produce_flags>();
  auto* produce = perf->add_subcommand("produce", "Send N records of B bytes; report throughput and latency percentiles");
  produce->add_option("topic", p->topic, "Topic to write to")->required();
  produce->add_option("--records", p->records, "Number of records to send")->required()->check(integer_in(1));
  produce->add_option("--record-size", p->record_size, "Bytes per record value")
    ->capture_default_str()
    ->check(integer_in(0, 100 << 20));
  produce->add_option("--acks", p->acks, "0, 1 or all")->capture_default_str();
  produce->add_option("--throughput", p->throughput, "Cap on records/s (-1: unlimited)")
    ->capture_default_str()
    ->check(integer_in(-1));
  produce->add_option("--batch-size", p->batch_size, "batch.size in bytes")
    ->capture_default_str()
    ->check(integer_in(1, 1 << 30));
  produce->add_option("--linger-ms", p->linger_ms, "linger.ms")->capture_default_str()->check(integer_in(0));
  produce->add_option("--max-in-flight", p->max_in_flight, "Requests in flight per partition")
    ->capture_default_str()
    ->check(integer_in(1, 1000));
  produce->add_option("--buffer-memory", p->buffer_memory, "buffer.memory in bytes")
    ->capture_default_str()
    ->check(integer_in(1));
  produce->add_option("--report-interval-ms", p->report_interval_ms, "Progress line interval")
    ->capture_default_str()
    ->check(integer_in(1));
  add_client_options(produce, p->client);
  produce->callback([p] { run_perf_produce(*p); });

  auto c = std::make_shared<perf_consume_flags>();
  auto* consume = perf->add_subcommand("consume", "Read N records from the beginning; report records/s and MB/s");
  consume->add_option("topic", c->topic, "Topic to read")->required();
  consume->add_option("--records", c->records, "Number of records to read")->required()->check(integer_in(1));
  consume->add_option("--timeout-ms", c->timeout_ms, "Give up when nothing new arrives for this long")
    ->capture_default_str()
    ->check(integer_in(1));
  consume->add_option("--fetch-size", c->fetch_size, "max.partition.fetch.bytes")
    ->capture_default_str()
    ->check(integer_in(1024, 1 << 30));
  add_client_options(consume, c->client);
  consume->callback([c] { run_perf_consume(*c); });
}

} // namespace capstan::cli
