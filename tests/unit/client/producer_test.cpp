// The producer against a cluster_client that answers in memory (tests/support/memory_cluster):
// which thread sends a batch (the caller, the sender, or the thread whose answer freed its
// in-flight slot), and that batches of a partition reach the client in sequence order
// whichever thread sends them.

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "runtime/client/producer.hpp"
#include "tests/support/memory_cluster.hpp"

using namespace capstan;
using namespace capstan::client;
using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

constexpr int32_t partitions = 2;

client_config one_at_a_time() {
  client_config c;
  c.acks = -1;
  c.linger_ms = 0;
  return c;
}

bytes_view as_bytes(const std::string& s) {
  return bytes_view(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

// Holds whoever waits on it (the answer to a partition's first batch, with hold_first) until
// release(), so that what is sent meanwhile queues behind it.
struct held_window {
  std::mutex mu;
  std::condition_variable cv;
  bool released = false;

  void wait() {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return released; });
  }

  // Holds the answer to every batch at sequence 0.
  void hold_first(memory_cluster& cluster) {
    cluster.produce_answer = [this](int32_t, int32_t base_sequence) -> result<bool> {
      if (base_sequence == 0) wait();
      return true;
    };
  }

  void release() {
    {
      std::lock_guard lock(mu);
      released = true;
    }
    cv.notify_all();
  }
};

// Queues `n` records of `value` for partition 0; each acknowledgement counts in `acknowledged`.
void send_counted(producer& p, const std::string& value, int n, std::atomic<int>& acknowledged) {
  for (int i = 0; i < n; ++i)
    p.send(memory_cluster::topic, std::nullopt, as_bytes(value), 0,
           [&acknowledged](result<record_metadata> r) { acknowledged += r ? 1 : 0; });
}

// The size of the largest batch `cluster` was sent, from its `from`-th on.
size_t largest_sent(memory_cluster& cluster, size_t from = 0) {
  size_t largest = 0;
  const auto sent = cluster.sent();
  for (size_t i = from; i < sent.size(); ++i) largest = std::max(largest, sent[i].size_bytes);
  return largest;
}

} // namespace

TEST_CASE("with linger.ms 0 the calling thread sends its record itself, and flush returns once "
          "it is acknowledged",
          "[client][producer]") {
  memory_cluster cluster(one_at_a_time(), partitions);
  producer p(cluster, one_at_a_time());
  REQUIRE(p.init_producer_id().ok());
  const std::string value = "v";
  std::vector<int64_t> offsets; // written on the answering thread before flush returns
  for (int i = 0; i < 20; ++i) {
    p.send(memory_cluster::topic, std::nullopt, as_bytes(value), 0,
           [&](result<record_metadata> r) { offsets.push_back(r ? r->off.value() : -1); });
    p.flush();
    REQUIRE(offsets.size() == static_cast<size_t>(i + 1));
  }
  for (int i = 0; i < 20; ++i) CHECK(offsets[static_cast<size_t>(i)] == i);
  const auto sent = cluster.sent();
  CHECK(sent.size() == 20);
  for (const auto& b : sent) {
    CHECK(b.base_sequence >= 0);
    CHECK(b.thread == std::this_thread::get_id());
  }
}

TEST_CASE("the first record of a topic is stamped after the producer learnt the topic, not "
          "before",
          "[client][producer]") {
  memory_cluster cluster(one_at_a_time(), partitions);
  producer p(cluster, one_at_a_time());
  REQUIRE(p.init_producer_id().ok());
  // The first send learns the topic with a Metadata request; this one answers 50 ms late.
  timestamp_ms answered = 0;
  cluster.before_metadata = [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    answered = std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count();
  };
  p.send(memory_cluster::topic, std::nullopt, as_bytes("v"), 0, {});
  p.flush();
  const auto sent = cluster.sent();
  REQUIRE(sent.size() == 1);
  CHECK(sent[0].base_timestamp >= answered);
}

TEST_CASE("batches of a partition reach the client in sequence order while callers and the "
          "sender thread both send",
          "[client][producer]") {
  auto config = one_at_a_time();
  config.batch_size = 1024; // many batches, some closed full while others linger
  memory_cluster cluster(config, partitions);
  producer p(cluster, config);
  const std::string value(100, 'v');
  std::atomic<int> acknowledged{0};
  std::atomic<int> failed{0};
  constexpr int per_thread = 2000;
  std::vector<std::thread> callers;
  for (int t = 0; t < 3; ++t)
    callers.emplace_back([&, t] {
      for (int i = 0; i < per_thread; ++i) {
        p.send(memory_cluster::topic, std::nullopt, as_bytes(value), (t + i) % partitions,
               [&](result<record_metadata> r) { ++(r ? acknowledged : failed); });
        if (i % 97 == 0) p.flush();
      }
    });
  for (auto& c : callers) c.join();
  p.flush();
  CHECK(acknowledged == 3 * per_thread);
  CHECK(failed == 0);

  std::map<int32_t, int32_t> next;
  for (const auto& b : cluster.sent()) {
    INFO("partition " << b.partition);
    CHECK(b.base_sequence == next[b.partition]);
    next[b.partition] = b.base_sequence + b.records;
  }
  CHECK(next[0] + next[1] == 3 * per_thread);
}

TEST_CASE("a batch that fails after a later batch of its partition was acknowledged is reported "
          "appended with offset -1 and not resent",
          "[client][producer]") {
  auto config = one_at_a_time();
  config.retry_backoff_ms = 1;
  config.delivery_timeout_ms = 2000; // a resend loop ends in a failure, not a hang
  // Declared before the cluster and the producer, whose threads use them until destroyed.
  std::mutex mu;
  std::condition_variable cv;
  bool all_sent = false;
  int first_batch_answers = 0;
  std::vector<std::optional<result<record_metadata>>> outcomes(4);
  memory_cluster cluster(config, partitions);
  // The first batch is held while the two behind it are appended, then times out: as at an old
  // leader that stalled after appending it, while the new leader took the later batches.
  cluster.produce_answer = [&](int32_t, int32_t base_sequence) -> result<bool> {
    if (base_sequence != 0) return true;
    std::unique_lock lock(mu);
    if (++first_batch_answers == 1) {
      cv.wait(lock, [&] { return all_sent; });
      return false;
    }
    return make_error(errc::request_timed_out, "held at a stalled leader");
  };
  producer p(cluster, config);
  REQUIRE(p.init_producer_id().ok());
  for (size_t i = 0; i < 3; ++i)
    p.send(memory_cluster::topic, std::nullopt, as_bytes("v"), 0,
           [&, i](result<record_metadata> r) { outcomes[i] = std::move(r); });
  {
    std::lock_guard lock(mu);
    all_sent = true;
  }
  cv.notify_all();
  p.flush();
  REQUIRE(outcomes[0]);
  REQUIRE(outcomes[0]->ok());
  CHECK((*outcomes[0])->off.value() == -1);
  for (size_t i = 1; i < 3; ++i) {
    REQUIRE(outcomes[i]);
    CHECK(outcomes[i]->ok());
  }
  // Nothing was resent, and the partition's sequences go on where they were.
  p.send(memory_cluster::topic, std::nullopt, as_bytes("v"), 0,
         [&](result<record_metadata> r) { outcomes[3] = std::move(r); });
  p.flush();
  REQUIRE(outcomes[3]);
  CHECK(outcomes[3]->ok());
  const auto sent = cluster.sent();
  REQUIRE(sent.size() == 4);
  for (size_t i = 0; i < sent.size(); ++i) CHECK(sent[i].base_sequence == static_cast<int32_t>(i));
}

TEST_CASE("a batch held back by max.in.flight leaves from the thread whose answer freed its slot",
          "[client][producer]") {
  auto config = one_at_a_time();
  config.max_in_flight = 1;
  held_window window;
  memory_cluster cluster(config, partitions);
  // The first batch is answered only once a second one waits behind it.
  window.hold_first(cluster);
  producer p(cluster, config);
  REQUIRE(p.init_producer_id().ok());
  std::atomic<int> acknowledged{0};
  send_counted(p, "v", 3, acknowledged);
  window.release();
  p.flush();
  CHECK(acknowledged == 3);
  const auto sent = cluster.sent();
  REQUIRE(sent.size() == 2);
  CHECK(sent[0].thread == std::this_thread::get_id());
  CHECK(sent[1].records == 2);
  // Not the sender thread: the completion sent it, with no hand-off to the sender and back.
  CHECK(sent[1].thread == cluster.answering_thread());
}

namespace {

// Batches of 1 KiB that may grow to 8 KiB behind a single request in flight.
client_config growing_behind_one_in_flight() {
  auto config = one_at_a_time();
  config.max_in_flight = 1;
  config.batch_size = 1024;
  config.batch_max_size = 8192;
  return config;
}

} // namespace

TEST_CASE("while a partition has max.in.flight requests unanswered its batches grow past "
          "batch.size, within batch.max.size and half the topic's max.message.bytes",
          "[client][producer]") {
  const auto [max_message_bytes, limit] =
      GENERATE(table<int64_t, size_t>({{1 << 20, 8192}, {6000, 3000}, {1500, 1024}}));
  INFO("max.message.bytes " << max_message_bytes);
  const auto config = growing_behind_one_in_flight();
  held_window window;
  memory_cluster cluster(config, partitions);
  cluster.max_message_bytes = max_message_bytes;
  window.hold_first(cluster);
  producer p(cluster, config);
  REQUIRE(p.init_producer_id().ok());
  const std::string value(100, 'v');
  std::atomic<int> acknowledged{0};
  send_counted(p, value, 201, acknowledged);
  window.release();
  p.flush();
  CHECK(acknowledged == 201);
  const auto sent = cluster.sent();
  REQUIRE(sent.size() > 1);
  CHECK(sent[0].records == 1);
  const size_t largest = largest_sent(cluster, 1);
  CHECK(largest <= limit);
  CHECK(largest > limit - 2 * (value.size() + 40));
}

TEST_CASE("a single record refused MESSAGE_TOO_LARGE leaves batches growing",
          "[client][producer]") {
  const auto config = growing_behind_one_in_flight();
  held_window window;
  memory_cluster cluster(config, partitions);
  cluster.max_message_bytes = 6000;
  producer p(cluster, config);
  REQUIRE(p.init_producer_id().ok());
  std::optional<result<record_metadata>> refused;
  p.send(memory_cluster::topic, std::nullopt, as_bytes(std::string(7000, 'b')), 0,
         [&](result<record_metadata> r) { refused = std::move(r); });
  p.flush();
  REQUIRE(refused);
  CHECK(refused->code() == errc::message_too_large);
  const auto before = cluster.sent().size();

  // The partition restarts its sequences after the refusal: the next first batch is held.
  window.hold_first(cluster);
  const std::string value(100, 'v');
  std::atomic<int> acknowledged{0};
  send_counted(p, value, 101, acknowledged);
  window.release();
  p.flush();
  CHECK(acknowledged == 101);
  CHECK(largest_sent(cluster, before) > 3000 - 2 * (value.size() + 40));
}

TEST_CASE("while the producer id is awaited, batches behind a full one grow past batch.size",
          "[client][producer]") {
  auto config = growing_behind_one_in_flight();
  config.max_in_flight = 5; // nothing is in flight: the window is never full
  held_window window;
  memory_cluster cluster(config, partitions);
  cluster.max_message_bytes = 1 << 20;
  cluster.before_producer_id = [&] { window.wait(); };
  producer p(cluster, config);
  const std::string value(100, 'v');
  std::atomic<int> acknowledged{0};
  send_counted(p, value, 200, acknowledged);
  window.release();
  p.flush();
  CHECK(acknowledged == 200);
  const auto sent = cluster.sent();
  REQUIRE(sent.size() > 1);
  CHECK(sent[0].size_bytes <= 1024);
  const size_t largest = largest_sent(cluster);
  CHECK(largest > 8192 - 2 * (value.size() + 40));
  CHECK(largest <= 8192);
}

TEST_CASE("a grown batch refused MESSAGE_TOO_LARGE fails its records and the topic's batches "
          "grow no more",
          "[client][producer]") {
  const auto config = growing_behind_one_in_flight();
  held_window window;
  memory_cluster cluster(config, partitions);
  cluster.max_message_bytes = 1 << 20;
  window.hold_first(cluster);
  producer p(cluster, config);
  REQUIRE(p.init_producer_id().ok());
  const std::string value(100, 'v');
  std::atomic<int> acknowledged{0};
  std::atomic<int> too_large{0};
  const auto count = [&](result<record_metadata> r) {
    if (r)
      ++acknowledged;
    else if (r.code() == errc::message_too_large)
      ++too_large;
  };
  for (int i = 0; i < 101; ++i)
    p.send(memory_cluster::topic, std::nullopt, as_bytes(value), 0, count);
  // Lowered while the grown batches wait, as an operator's alter would be.
  cluster.max_message_bytes = 2000;
  window.release();
  p.flush();
  CHECK(too_large > 0);
  CHECK(acknowledged + too_large == 101);

  const auto before = cluster.sent().size();
  acknowledged = 0;
  too_large = 0;
  for (int i = 0; i < 100; ++i)
    p.send(memory_cluster::topic, std::nullopt, as_bytes(value), 0, count);
  p.flush();
  CHECK(acknowledged == 100);
  const auto sent = cluster.sent();
  for (size_t i = before; i < sent.size(); ++i) CHECK(sent[i].size_bytes <= 1024);
}
