#include "runtime/cli/perf_command.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
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
constexpr const char* batch_max_size_help =
    "batch.max.size in bytes: a batch grows past --batch-size up to this while it cannot be sent "
    "yet (--max-in-flight requests unanswered, or a full batch ahead of it); at or below "
    "--batch-size, never";

struct perf_produce_flags {
  client_options client;
  std::string topic;
  int64_t records = 0;
  int32_t record_size = 100;
  std::string acks = "all";
  int64_t throughput = -1;
  int32_t batch_size = 16384;
  int32_t batch_max_size = 262144;
  int64_t linger_ms = 0;
  int32_t max_in_flight = 5;
  int64_t buffer_memory = 33554432;
  int64_t report_interval_ms = 5000;
  bool sync = false;
  int64_t warmup_records = 0; // --sync only
  std::optional<bool> idempotence;
  int64_t keys = 0;      // distinct keys, in turn; 0: no key (the sticky partitioner)
  int32_t producers = 1; // each with its own connection, sending its share of the records
  compression codec = compression::none;
};

struct perf_e2e_flags {
  client_options client;
  std::string topic;
  int64_t records = 0;
  int64_t throughput = 10000;
  int32_t record_size = 100;
  std::string acks = "all";
  int32_t batch_size = 16384;
  int32_t batch_max_size = 262144;
  int64_t linger_ms = 0;
  int32_t max_in_flight = 5;
  int64_t timeout_ms = 10000;
  int64_t warmup_records = 0;
  compression codec = compression::none;
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

// One producer's tally, in microseconds: written by its client thread (acknowledgements), read
// for the reports; both take the lock. Each producer keeps its own, as separate producer
// processes would: an acknowledgement never waits for another producer's lock.
struct produce_stats {
  std::mutex mu;
  client::latency_histogram total;
  client::latency_histogram window;
  uint64_t window_bytes = 0;
  uint64_t record_size = 0;
  uint64_t failed = 0;
  std::optional<error> first_error;

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
};

// Every producer's tally, and when the window the next progress line covers started.
struct produce_tallies {
  explicit produce_tallies(int32_t producers, int32_t record_size)
      : each(static_cast<size_t>(producers)) {
    for (auto& s : each) s.record_size = static_cast<uint64_t>(record_size);
  }
  std::deque<produce_stats> each;
  steady::time_point window_start = steady::now();

  // "N records sent, X records/sec (Y MB/sec), A ms avg latency, M ms max latency." for the
  // window since the last report, over every producer.
  void report_window() {
    client::latency_histogram window;
    uint64_t bytes = 0;
    for (auto& s : each) {
      std::lock_guard lock(s.mu);
      window.merge(s.window);
      bytes += s.window_bytes;
      s.window.reset();
      s.window_bytes = 0;
    }
    const double secs = seconds_since(window_start);
    std::printf("%llu records sent, %.1f records/sec (%.2f MB/sec), %.1f ms avg latency, %.1f ms "
                "max latency.\n",
                static_cast<unsigned long long>(window.count()),
                static_cast<double>(window.count()) / secs, static_cast<double>(bytes) / mib / secs,
                window.mean() / 1000.0, static_cast<double>(window.max()) / 1000.0);
    std::fflush(stdout);
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

// "N records sent one at a time, ..." with latencies in microseconds: the line `--sync` ends with.
void print_sync_summary(const client::latency_histogram& h, double secs) {
  std::printf("%llu records sent one at a time, %.1f records/sec, %.1f us avg latency, "
              "%lld us max latency, %lld us 50th, %lld us 99th, %lld us 99.9th.\n",
              static_cast<unsigned long long>(h.count()), static_cast<double>(h.count()) / secs,
              h.mean(), static_cast<long long>(h.max()), static_cast<long long>(h.percentile(0.5)),
              static_cast<long long>(h.percentile(0.99)),
              static_cast<long long>(h.percentile(0.999)));
  std::fflush(stdout);
}

// One record in flight: each record is sent alone and the next one only after its
// acknowledgement (flush() returns once it is acknowledged or failed), so a latency is one
// request's round trip through the cluster, measured on the sending thread from send() to the
// return of flush(). Stops at the first failed record.
void run_perf_produce_sync(const perf_produce_flags& f, client::cluster_client& client,
                           const client::client_config& config, bytes_view value,
                           produce_tallies& tallies) {
  auto& stats = tallies.each.front();
  auto start = steady::now();
  auto next_report = start + std::chrono::milliseconds(f.report_interval_ms);
  {
    // Each record is flushed at once, so linger.ms does not apply; at 0 the producer sends the
    // record from this thread (producer.cpp, dispatch_ready).
    auto one_at_a_time = config;
    one_at_a_time.linger_ms = 0;
    client::producer producer(client, one_at_a_time);
    for (int64_t i = -f.warmup_records; i < f.records; ++i) {
      // Measured from the first record after the warm-up (which pays for the producer id, the
      // metadata and the connection).
      if (i == 0) start = steady::now();
      const auto sent_at = steady::now();
      producer.send(f.topic, std::nullopt, value, std::nullopt,
                    [stats = &stats](capstan::result<client::record_metadata> r) {
                      if (!r) stats->failure(r.err());
                    });
      producer.flush();
      const auto acked_at = steady::now();
      {
        std::lock_guard lock(stats.mu);
        if (stats.failed > 0) break;
      }
      if (i < 0) continue;
      const auto latency =
          std::chrono::duration_cast<std::chrono::microseconds>(acked_at - sent_at).count();
      stats.acknowledged(latency);
      if (acked_at >= next_report) {
        tallies.report_window();
        next_report = acked_at + std::chrono::milliseconds(f.report_interval_ms);
      }
    }
  }
  const double secs = seconds_since(start);
  std::lock_guard lock(stats.mu);
  print_sync_summary(stats.total, secs);
  if (stats.failed > 0)
    fail("record " + std::to_string(stats.total.count()) + " failed; " +
             stats.first_error->to_string(),
         exit_failed);
}

// Producer `index` of f.producers: records index, index + producers, ... of f.records, at its
// share of --throughput, each with key keys[record % keys.size()] when there are keys. The
// first producer prints the progress lines.
void produce_share(const perf_produce_flags& f, client::cluster_client& client,
                   const client::client_config& config, bytes_view value,
                   const std::vector<std::string>& keys, int32_t index, steady::time_point start,
                   produce_tallies& tallies) {
  auto& stats = tallies.each[static_cast<size_t>(index)];
  // --throughput 0 or -1: unlimited, as the throttler takes them.
  throttler throttle(f.throughput <= 0 ? f.throughput : std::max<int64_t>(1, f.throughput / f.producers), start);
  auto next_report = start + std::chrono::milliseconds(f.report_interval_ms);
  client::producer producer(client, config);
  int64_t sent = 0;
  for (int64_t i = index; i < f.records; i += f.producers) {
    const auto sent_at = steady::now();
    std::optional<bytes_view> key;
    if (!keys.empty()) {
      const auto& k = keys[static_cast<size_t>(i % static_cast<int64_t>(keys.size()))];
      key = bytes_view(reinterpret_cast<const uint8_t*>(k.data()), k.size());
    }
    // Two words of capture: stays inside std::function's small buffer (no allocation).
    producer.send(f.topic, key, value, std::nullopt,
                  [stats = &stats, sent_at](capstan::result<client::record_metadata> r) {
                    if (!r) {
                      stats->failure(r.err());
                      return;
                    }
                    const auto latency = std::chrono::duration_cast<std::chrono::microseconds>(steady::now() - sent_at);
                    stats->acknowledged(latency.count());
                  });
    if (index == 0 && (sent & 1023) == 0 && sent_at >= next_report) {
      tallies.report_window();
      next_report = sent_at + std::chrono::milliseconds(f.report_interval_ms);
    }
    throttle.pace(++sent);
  }
  producer.flush();
}

void run_perf_produce(const perf_produce_flags& f) {
  auto acks = parse_acks(f.acks);
  if (!acks) fail("--acks must be 0, 1 or all, not '" + f.acks + "'", exit_usage);
  auto config = make_client_config(f.client);
  config.acks = *acks;
  config.batch_size = f.batch_size;
  config.batch_max_size = f.batch_max_size;
  config.linger_ms = f.linger_ms;
  config.max_in_flight = f.max_in_flight;
  config.buffer_memory = f.buffer_memory;
  config.compression_type = f.codec;
  apply_idempotence_or_fail(config, f.idempotence);
  auto client = connect_or_fail(config);
  if (auto md = client->metadata({f.topic}); !md) fail(md.err());

  // Random upper-case letters, as kafka-producer-perf-test's default payload.
  bytes payload(static_cast<size_t>(f.record_size));
  std::mt19937 rng(1);
  for (auto& b : payload) b = static_cast<uint8_t>('A' + rng() % 26);
  const bytes_view value(payload);

  produce_tallies tallies(f.sync ? 1 : f.producers, f.record_size);
  if (f.sync) return run_perf_produce_sync(f, *client, config, value, tallies);
  // Fixed-width keys, so every record is the same size whatever its key.
  std::vector<std::string> keys;
  for (int64_t k = 0; k < f.keys; ++k) {
    char key[24];
    std::snprintf(key, sizeof key, "key-%012lld", static_cast<long long>(k));
    keys.emplace_back(key);
  }
  // Every producer after the first gets a connection of its own, as separate producer processes
  // would have.
  std::vector<std::unique_ptr<client::cluster_client>> more_clients;
  for (int32_t i = 1; i < f.producers; ++i) more_clients.push_back(connect_or_fail(config));
  const auto start = steady::now();
  std::vector<std::thread> others;
  for (int32_t i = 1; i < f.producers; ++i)
    others.emplace_back(
        [&, i] { produce_share(f, *more_clients[i - 1], config, value, keys, i, start, tallies); });
  produce_share(f, *client, config, value, keys, 0, start, tallies);
  for (auto& t : others) t.join();
  const double secs = seconds_since(start);
  client::latency_histogram h;
  uint64_t failed = 0;
  std::optional<error> first_error; // of the first producer, in order, that had one
  for (auto& stats : tallies.each) {
    std::lock_guard lock(stats.mu);
    h.merge(stats.total);
    failed += stats.failed;
    if (!first_error) first_error = stats.first_error;
  }
  const auto n = static_cast<double>(h.count());
  auto ms = [](int64_t us) { return static_cast<double>(us) / 1000.0; };
  std::printf("%llu records sent, %.1f records/sec (%.2f MB/sec), %.2f ms avg latency, %.2f ms max latency, "
              "%.2f ms 50th, %.2f ms 95th, %.2f ms 99th, %.2f ms 99.9th.\n",
              static_cast<unsigned long long>(h.count()), n / secs, n * f.record_size / mib / secs,
              h.mean() / 1000.0, ms(h.max()), ms(h.percentile(0.5)), ms(h.percentile(0.95)),
              ms(h.percentile(0.99)), ms(h.percentile(0.999)));
  std::fflush(stdout);
  if (failed > 0)
    fail(std::to_string(failed) + " records failed; first error: " + first_error->to_string(),
         exit_failed);
}

// The value of an end-to-end record starts with its send time (steady clock, ns) and its
// sequence number, each 8 bytes in host order: producer and consumer are one process.
constexpr int32_t e2e_header_size = 16;

// What the consumer side of `perf e2e` saw. Only the consuming (main) thread touches it.
struct e2e_tally {
  e2e_tally(int64_t warmup, int64_t records)
      : warmup(static_cast<uint64_t>(warmup)), seen(static_cast<size_t>(warmup + records), false) {}
  uint64_t warmup; // the first sequence numbers, not measured
  std::vector<bool> seen;
  uint64_t received = 0; // distinct records of this run, warm-up included
  uint64_t duplicates = 0;
  uint64_t foreign = 0; // too short or out of sequence range: not written by this run
  uint64_t payload = 0;
  client::latency_histogram latency_us;

  void visit(const client::record_ref& r, steady::time_point now) {
    const auto& v = r.record.value;
    if (!v || v->size() < static_cast<size_t>(e2e_header_size)) {
      ++foreign;
      return;
    }
    int64_t sent_ns = 0;
    uint64_t seq = 0;
    std::memcpy(&sent_ns, v->data(), sizeof sent_ns);
    std::memcpy(&seq, v->data() + sizeof sent_ns, sizeof seq);
    if (seq >= seen.size()) {
      ++foreign;
      return;
    }
    if (seen[seq]) {
      ++duplicates;
      return;
    }
    seen[seq] = true;
    ++received;
    payload += v->size();
    if (seq < warmup) return;
    const auto now_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
    latency_us.record((now_ns - sent_ns) / 1000);
  }
};

// The producing side of `perf e2e`: a thread that sends `records` records at `throughput`
// records/s until done or stopped, then waits for every acknowledgement (bounded by
// delivery.timeout.ms). Joined by the destructor, so no exit path leaves it running.
class e2e_sender {
public:
  e2e_sender(client::cluster_client& client, const client::client_config& config,
             const perf_e2e_flags& f)
      : thread_([this, &client, config, f] { run(client, config, f); }) {}
  ~e2e_sender() { join(); }
  e2e_sender(const e2e_sender&) = delete;
  e2e_sender& operator=(const e2e_sender&) = delete;

  void stop() { stopping_ = true; }
  void join() {
    if (thread_.joinable()) thread_.join();
  }
  // REQUIRES: join() returned.
  uint64_t failed() const { return failed_; }
  const std::optional<error>& first_error() const { return first_error_; }

private:
  void run(client::cluster_client& client, const client::client_config& config,
           const perf_e2e_flags& f) {
    bytes value(static_cast<size_t>(f.record_size));
    std::mt19937 rng(1);
    for (auto& b : value) b = static_cast<uint8_t>('A' + rng() % 26);
    client::producer producer(client, config);
    throttler throttle(f.throughput, steady::now());
    const int64_t total = f.warmup_records + f.records;
    for (int64_t i = 0; i < total && !stopping_; ++i) {
      if (i == f.warmup_records && i > 0) {
        // Nothing measured queues behind the warm-up (the first send waits for the producer
        // id): it is acknowledged before the measured records start, at the same rate.
        producer.flush();
        throttle = throttler(f.throughput, steady::now());
      }
      const int64_t now_ns =
          std::chrono::duration_cast<std::chrono::nanoseconds>(steady::now().time_since_epoch())
              .count();
      const auto seq = static_cast<uint64_t>(i);
      std::memcpy(value.data(), &now_ns, sizeof now_ns);
      std::memcpy(value.data() + sizeof now_ns, &seq, sizeof seq);
      producer.send(f.topic, std::nullopt, bytes_view(value), std::nullopt,
                    [this](capstan::result<client::record_metadata> r) {
                      if (r) return;
                      std::lock_guard lock(mu_);
                      if (failed_++ == 0) first_error_ = r.err();
                    });
      throttle.pace(i < f.warmup_records ? i + 1 : i + 1 - f.warmup_records);
    }
    producer.flush();
  }

  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  uint64_t failed_ = 0;
  std::optional<error> first_error_;
  std::thread thread_; // last: started once every other member is constructed
};

// Produces at a fixed rate and consumes the same records in this process; a record's latency is
// from just before send() to its visit by the consumer, so it includes batching, replication up
// to the high watermark (a consumer reads only below it) and the fetch long poll.
void run_perf_e2e(const perf_e2e_flags& f) {
  auto acks = parse_acks(f.acks);
  if (!acks) fail("--acks must be 0, 1 or all, not '" + f.acks + "'", exit_usage);
  auto config = make_client_config(f.client);
  config.acks = *acks;
  config.batch_size = f.batch_size;
  config.batch_max_size = f.batch_max_size;
  config.linger_ms = f.linger_ms;
  config.max_in_flight = f.max_in_flight;
  // A record not even sent within --timeout-ms fails rather than waiting delivery.timeout.ms.
  config.delivery_timeout_ms = f.timeout_ms;
  config.compression_type = f.codec;
  auto client = connect_or_fail(config);
  client::consumer consumer(*client, config);
  if (auto s = consumer.assign(f.topic); !s) fail(s.err());
  // Only what this run writes: positions are taken before the first send.
  if (auto s = consumer.seek_to_end(); !s) fail(s.err());

  e2e_tally tally(f.warmup_records, f.records);
  const auto want = static_cast<uint64_t>(f.warmup_records + f.records);
  const auto start = steady::now();
  std::optional<error> poll_error;
  bool timed_out = false;
  {
    e2e_sender sender(*client, config, f);
    while (tally.received < want) {
      auto n =
          consumer.poll_each(std::chrono::milliseconds(f.timeout_ms),
                             [&](const client::record_ref& r) { tally.visit(r, steady::now()); });
      if (!n) {
        poll_error = n.err();
        break;
      }
      if (*n == 0) {
        timed_out = true;
        break;
      }
    }
    sender.stop();
    sender.join();
    if (sender.failed() > 0)
      fail(std::to_string(sender.failed()) +
               " records failed; first error: " + sender.first_error()->to_string(),
           exit_failed);
  }
  const double secs = seconds_since(start);
  const auto& h = tally.latency_us;
  const std::string after_warmup =
      f.warmup_records > 0 ? " (after " + std::to_string(f.warmup_records) + " warm-up)" : "";
  std::printf(
      "%llu records received end to end%s, %.1f records/sec (%.2f MB/sec), %.1f us avg latency, "
      "%lld us max latency, %lld us 50th, %lld us 99th, %lld us 99.9th.\n",
      static_cast<unsigned long long>(h.count()), after_warmup.c_str(),
      static_cast<double>(tally.received) / secs, static_cast<double>(tally.payload) / mib / secs,
      h.mean(), static_cast<long long>(h.max()), static_cast<long long>(h.percentile(0.5)),
      static_cast<long long>(h.percentile(0.99)), static_cast<long long>(h.percentile(0.999)));
  std::fflush(stdout);
  if (tally.duplicates > 0 || tally.foreign > 0)
    std::cerr << "warning: " << tally.duplicates << " duplicate records, " << tally.foreign
              << " records not written by this run" << std::endl;
  if (poll_error) fail(*poll_error);
  if (timed_out)
    fail("no record arrived for " + std::to_string(f.timeout_ms) + " ms (--timeout-ms); " +
             std::to_string(want - tally.received) + " of " + std::to_string(want) +
             " records never consumed",
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
  auto* perf = app.add_subcommand("perf", "Measure throughput and latency against a running cluster");
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
  produce->add_option("--batch-max-size", p->batch_max_size, batch_max_size_help)
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
  auto* sync =
      produce->add_flag("--sync", p->sync,
                        "One record in flight: send one record per request, the next after its "
                        "acknowledgement; report latency percentiles in microseconds "
                        "(--batch-size, --batch-max-size and --linger-ms do not apply)");
  produce
      ->add_option("--warmup-records", p->warmup_records,
                   "With --sync: records sent first and left out of the figures (as "
                   "kafka-producer-perf-test's --warmup-records)")
      ->capture_default_str()
      ->check(integer_in(0, 1000000000))
      ->needs(sync);
  auto* keys = produce
                   ->add_option("--keys", p->keys,
                                "Distinct keys the records carry in turn (key-000000000000, ...), "
                                "so the default partitioner spreads them over the partitions by "
                                "key hash; 0: no key")
                   ->capture_default_str()
                   ->check(integer_in(0, 100000000));
  auto* producers = produce
                        ->add_option("--producers", p->producers,
                                     "Producers sending in parallel, each on its own connection "
                                     "and thread, with an equal share of --records and --throughput")
                        ->capture_default_str()
                        ->check(integer_in(1, 64));
  add_idempotence_option(produce, p->idempotence);
  add_compression_option(produce, p->codec);
  add_client_options(produce, p->client);
  sync->excludes("--throughput")->excludes("--max-in-flight")->excludes(keys)->excludes(producers);
  produce->callback([p] { run_perf_produce(*p); });

  auto e = std::make_shared<perf_e2e_flags>();
  auto* e2e = perf->add_subcommand(
      "e2e",
      "Produce at a fixed rate and consume in the same process; report produce-to-consume latency");
  e2e->add_option("topic", e->topic, "Topic to write to and read from")->required();
  e2e->add_option("--records", e->records, "Number of records to send and receive")
    ->required()
    ->check(integer_in(1, 1000000000));
  e2e->add_option("--throughput", e->throughput, "Records/s the producer sends at")
    ->capture_default_str()
    ->check(integer_in(1, 10000000));
  e2e->add_option("--record-size", e->record_size,
                  "Bytes per record value; the first 16 carry the send time and a sequence number")
    ->capture_default_str()
    ->check(integer_in(e2e_header_size, 100 << 20));
  e2e->add_option("--acks", e->acks, "0, 1 or all")->capture_default_str();
  e2e->add_option("--batch-size", e->batch_size, "batch.size in bytes")
    ->capture_default_str()
    ->check(integer_in(1, 1 << 30));
  e2e->add_option("--batch-max-size", e->batch_max_size, batch_max_size_help)
    ->capture_default_str()
    ->check(integer_in(1, 1 << 30));
  e2e->add_option("--linger-ms", e->linger_ms, "linger.ms")
    ->capture_default_str()
    ->check(integer_in(0));
  e2e->add_option("--max-in-flight", e->max_in_flight, "Requests in flight per partition")
    ->capture_default_str()
    ->check(integer_in(1, 1000));
  e2e->add_option("--warmup-records", e->warmup_records,
                  "Records sent and consumed first and left out of the figures")
      ->capture_default_str()
      ->check(integer_in(0, 1000000000));
  e2e->add_option("--timeout-ms", e->timeout_ms,
                  "Fail when no record arrives for this long; also each record's delivery timeout")
    ->capture_default_str()
    ->check(integer_in(1));
  add_compression_option(e2e, e->codec);
  add_client_options(e2e, e->client);
  e2e->callback([e] { run_perf_e2e(*e); });

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
