// The real `capstan` binary against clients that misbehave on purpose: ones that pipeline 64 MiB
// produces or 8 MiB fetches without reading an answer, one that opens connections in a loop, one
// that parks thousands of fetches, and enough connections to run the node out of file
// descriptors. Each time the node's resident memory stays under the bound docs/operations.md
// states ("Client connections and memory bounds"), a well-behaved client alongside keeps
// working, and the node serves new clients once the hostile ones are gone.

#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <fstream>
#include <memory>
#include <thread>

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "runtime/batch/record_batch_builder.hpp"
#include "runtime/client/cluster_client.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/free_port.hpp"
#include "tests/support/raw_rpc_client.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

const std::string binary = CAPSTAN_BINARY;
constexpr int64_t mib = 1024; // in KiB, the unit of VmRSS

// `capstan node` with a TOML config, started through /bin/sh so that it can run under a lower
// open-file limit (`ulimit -n`, inherited by the exec'd node). Killed when it goes out of scope.
class node_under_test {
public:
  node_under_test(const temp_dir& dir, const std::string& toml, int open_files = 0)
      : rpc_(free_port()), metrics_(free_port()) {
    const auto config = dir / "node.toml";
    std::ofstream(config) << toml;
    std::string command = open_files > 0 ? "ulimit -n " + std::to_string(open_files) + " && " : "";
    command +=
        "exec '" + binary + "' node --config '" + config.string() + "' --data-dir '" +
        (dir / "data").string() + "' --listen 127.0.0.1:" + std::to_string(rpc_) +
        " --cluster-listen 127.0.0.1:0 --metrics-listen 127.0.0.1:" + std::to_string(metrics_) +
        " --kafka-listen 127.0.0.1:0";
    child_ = std::make_unique<child_process>("/bin/sh", std::vector<std::string>{"-c", command},
                                             dir.path(), "node");
    const bool up = child_->wait_for_stderr("ready; stop with", 60s);
    INFO(child_->stderr_text());
    REQUIRE(up);
  }

  int pid() const { return child_->pid(); }
  uint16_t rpc_port() const { return rpc_; }
  std::string stderr_text() const { return child_->stderr_text(); }

  std::unique_ptr<client::cluster_client> client() const {
    client::client_config c;
    c.bootstrap = {"127.0.0.1:" + std::to_string(rpc_)};
    auto connected = client::cluster_client::connect(c);
    INFO((connected ? std::string() : connected.err().to_string()));
    REQUIRE(connected);
    return std::move(*connected);
  }

  // The value of `series` (name and labels as rendered) on /metrics; -1 if absent or unreachable
  // within 5 s.
  int64_t metric(const std::string& series) const {
    int fd = connect_loopback(metrics_);
    if (fd < 0) return -1;
    timeval tv{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    const std::string request = "GET /metrics HTTP/1.0\r\n\r\n";
    ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
    std::string text;
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;)
      text.append(buf, static_cast<size_t>(n));
    ::close(fd);
    const auto at = text.find("\n" + series + " ");
    return at == std::string::npos ? -1 : std::stoll(text.substr(at + series.size() + 2));
  }

  // Waits (bounded) until metric(series) satisfies `want`; returns the last value read.
  template <class Pred>
  int64_t wait_metric(const std::string& series, Pred want,
                      std::chrono::seconds bound = 30s) const {
    const auto deadline = std::chrono::steady_clock::now() + bound;
    int64_t v = metric(series);
    while (!want(v) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(50ms);
      v = metric(series);
    }
    return v;
  }

private:
  uint16_t rpc_;
  uint16_t metrics_;
  std::unique_ptr<child_process> child_;
};

bytes one_record(size_t value_size) {
  record_batch_builder builder(offset{0}, 1000);
  builder.add(std::nullopt, bytes(value_size, 'v'), 1000);
  return builder.build();
}

// A well-behaved client's round trip: metadata, then an acknowledged produce to `topic`.
void served(const node_under_test& node, const std::string& topic) {
  auto c = node.client();
  REQUIRE(c->metadata());
  auto produced = c->produce_sync(topic, 0, 1, one_record(100));
  INFO((produced ? std::string() : produced.err().to_string()));
  CHECK(produced);
}

// Closes every fd in `fds`.
void close_all(std::vector<int>& fds) {
  for (int fd : fds)
    if (fd >= 0) ::close(fd);
  fds.clear();
}

} // namespace

TEST_CASE("a client pipelining 64 MiB produces without reading replies raises the node's RSS by "
          "less than 512 MiB",
          "[system][limits]") {
  temp_dir dir("capstan-hostile");
  node_under_test node(dir, "");
  auto good = node.client();
  // Every append of the flood is fsynced: where the network outruns the disk, requests pile up
  // in memory without a bound. (On a busy 2-core box the node reads no faster than it appends,
  // so the fetch test below is the one that tells a bounded node from an unbounded one here.)
  REQUIRE(good->create_topic(
      topic_spec{"flood", 1, 1, {{"max.message.bytes", "67200000"}, {"flush.messages", "1"}}}));
  REQUIRE(good->create_topic(topic_spec{"calm", 1, 1, {}}));
  REQUIRE(good->produce_sync("calm", 0, 1, one_record(100)));
  const int64_t before = rss_kib(node.pid());
  REQUIRE(before > 0);

  const auto batch = one_record((size_t{64} << 20) - 4096);
  raw_rpc_client flood(node.rpc_port(), 2s);
  REQUIRE(flood.send_bootstrap());
  std::atomic<bool> writing{true};
  std::atomic<int> sent{0};
  std::thread writer([&] {
    // 16 produces are 1 GiB; the writer stops early once the node has not read for 2 s, and
    // after 15 s in any case.
    const auto stop_at = std::chrono::steady_clock::now() + 15s;
    while (sent < 16 && std::chrono::steady_clock::now() < stop_at &&
           flood.send_produce("flood", 0, 1, 120000, batch))
      ++sent;
    writing = false;
  });
  int64_t peak = before;
  bool good_served = false;
  while (writing) {
    peak = std::max(peak, rss_kib(node.pid()));
    if (!good_served) {
      auto produced = good->produce_sync("calm", 0, 1, one_record(100));
      INFO((produced ? std::string() : produced.err().to_string()));
      CHECK(produced);
      good_served = true;
    }
    std::this_thread::sleep_for(20ms);
  }
  writer.join();
  for (int i = 0; i < 100; ++i) {
    peak = std::max(peak, rss_kib(node.pid()));
    std::this_thread::sleep_for(20ms);
  }
  INFO("RSS before " << before / mib << " MiB, peak " << peak / mib << " MiB; " << sent
                     << " produces sent");
  CHECK(peak - before < 512 * mib);
  served(node, "calm");
}

TEST_CASE("a client pipelining 8 MiB fetches without reading the answers raises the node's RSS "
          "by less than 256 MiB",
          "[system][limits]") {
  temp_dir dir("capstan-hostile");
  node_under_test node(dir, "");
  auto good = node.client();
  REQUIRE(good->create_topic(topic_spec{"data", 1, 1, {}}));
  for (int i = 0; i < 8; ++i) REQUIRE(good->produce_sync("data", 0, 1, one_record(1000 << 10)));
  const int64_t before = rss_kib(node.pid());

  // 100 fetches of the whole 8 MiB log (still in the active segment: each answer is a buffer of
  // its own), sent at once; the client's receive buffer is tiny, so the answers stay in the node.
  raw_rpc_client greedy(node.rpc_port(), 5s, 4096);
  REQUIRE(greedy.send_bootstrap());
  for (int i = 0; i < 100; ++i) REQUIRE(greedy.send_fetch("data", 0, 0, 8 << 20, 0, 0));
  const std::string fetches = "capstan_rpc_requests_total{method=\"fetch\"}";
  int64_t peak = before;
  const auto deadline = std::chrono::steady_clock::now() + 8s;
  while (std::chrono::steady_clock::now() < deadline) {
    peak = std::max(peak, rss_kib(node.pid()));
    std::this_thread::sleep_for(20ms);
  }
  const int64_t read = node.metric(fetches);
  INFO("RSS before " << before / mib << " MiB, peak " << peak / mib << " MiB; " << read
                     << " fetches read");
  CHECK(peak - before < 256 * mib);
  CHECK(read < 100);

  // A well-behaved client is served meanwhile; once the greedy one reads, so is it.
  served(node, "data");
  auto deadline_all = std::chrono::steady_clock::now() + 60s;
  while (node.metric(fetches) < 100 && std::chrono::steady_clock::now() < deadline_all)
    greedy.discard_answers(50ms);
  CHECK(node.metric(fetches) == 100);
}

TEST_CASE("connections past max.connections are closed at once, and the node serves its clients "
          "and new ones afterwards",
          "[system][limits]") {
  temp_dir dir("capstan-hostile");
  // With 256 open files, max.connections defaults to 128 (and max.broker.partitions to what the
  // whole limit holds after its reserve: none beyond __consumer_offsets, so it is set).
  node_under_test node(dir, "max.broker.partitions = 10\n", 256);
  CHECK(node.stderr_text().find("max.connections 128,") != std::string::npos);
  auto good = node.client();
  REQUIRE(good->create_topic(topic_spec{"calm", 1, 1, {}}));
  const int64_t before = rss_kib(node.pid());

  std::vector<int> held;
  int refused = 0;
  for (int i = 0; i < 1000; ++i) {
    int fd = connect_loopback(node.rpc_port());
    REQUIRE(fd >= 0);
    if (held.size() < 200)
      held.push_back(fd);
    else
      ::close(fd); // a loop that gives up on each connection at once
  }
  // The node holds its connections up to the limit and closes the rest at once.
  for (int fd : held)
    if (closed_by_peer(fd, 100ms)) ++refused;
  const int64_t peak = rss_kib(node.pid());
  CHECK(refused >= 200 - 128);
  CHECK(node.wait_metric("capstan_rpc_connections", [](int64_t v) { return v == 128; }) == 128);
  CHECK(node.metric("capstan_rpc_connections_refused_total{limit=\"max.connections\"}") >= 800);
  INFO("RSS before " << before / mib << " MiB, with 128 connections " << peak / mib << " MiB");
  CHECK(peak - before < 64 * mib);
  CHECK(node.stderr_text().find("max.connections (128) reached") != std::string::npos);

  // The client connected before the flood is served; a new one waits for a free slot.
  auto produced = good->produce_sync("calm", 0, 1, one_record(100));
  INFO((produced ? std::string() : produced.err().to_string()));
  CHECK(produced);
  close_all(held);
  CHECK(node.wait_metric("capstan_rpc_connections", [](int64_t v) { return v <= 2; }) <= 2);
  served(node, "calm");
}

TEST_CASE("a node out of file descriptors keeps accepting once descriptors are free again",
          "[system][limits]") {
  temp_dir dir("capstan-hostile");
  // max.connections above what 256 open files allow: accept() itself fails with EMFILE.
  node_under_test node(dir, "max.connections = 100000\nmax.broker.partitions = 10\n", 256);
  auto good = node.client();
  REQUIRE(good->create_topic(topic_spec{"calm", 1, 1, {}}));

  std::vector<int> held;
  for (int i = 0; i < 400; ++i) {
    int fd = connect_loopback(node.rpc_port());
    REQUIRE(fd >= 0);
    held.push_back(fd);
  }
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (node.stderr_text().find("accept failed") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(50ms);
  INFO(node.stderr_text());
  REQUIRE(node.stderr_text().find("Too many open files") != std::string::npos);
  // The client connected before keeps being served.
  auto produced = good->produce_sync("calm", 0, 1, one_record(100));
  INFO((produced ? std::string() : produced.err().to_string()));
  CHECK(produced);

  close_all(held);
  good.reset();
  served(node, "calm");
  CHECK(node.stderr_text().find("RPC server stopped") == std::string::npos);
  CHECK(node.wait_metric("capstan_rpc_accept_errors_total", [](int64_t v) { return v > 0; }) > 0);
}

TEST_CASE("thousands of parked fetches stop at fetch.max.parked.per.node, and the rest are "
          "answered at once",
          "[system][limits]") {
  temp_dir dir("capstan-hostile");
  node_under_test node(dir, "fetch.max.parked.per.connection = 1000\n"
                            "fetch.max.parked.per.node = 4000\n");
  auto good = node.client();
  REQUIRE(good->create_topic(topic_spec{"idle", 1, 1, {}}));
  REQUIRE(good->create_topic(topic_spec{"calm", 1, 1, {}}));
  const int64_t before = rss_kib(node.pid());

  // Five connections of 2,000 fetches each, waiting up to 300 s at the end of an empty log, and
  // never reading an answer.
  std::vector<std::unique_ptr<raw_rpc_client>> parkers;
  for (int c = 0; c < 5; ++c) {
    parkers.push_back(std::make_unique<raw_rpc_client>(node.rpc_port(), 5s));
    REQUIRE(parkers.back()->send_bootstrap());
    for (int i = 0; i < 2000; ++i)
      REQUIRE(parkers.back()->send_fetch("idle", 0, 0, 1 << 20, 1, 300000));
  }
  CHECK(node.wait_metric("capstan_rpc_fetches_not_parked_total",
                         [](int64_t v) { return v == 6000; }) == 6000);
  CHECK(node.metric("capstan_rpc_parked_fetches") == 4000);
  const int64_t peak = rss_kib(node.pid());
  INFO("RSS before " << before / mib << " MiB, with 4,000 parked fetches " << peak / mib << " MiB");
  CHECK(peak - before < 128 * mib);

  // A consumer alongside: its fetch is answered (at once, as the node's cap is reached, so it
  // counts as not parked) and it reads what was produced.
  REQUIRE(good->produce_sync("calm", 0, 1, one_record(100)));
  auto fetched = good->fetch_sync("calm", 0, offset{0}, 1 << 20, 1, 1000);
  INFO((fetched ? std::string() : fetched.err().to_string()));
  REQUIRE(fetched);
  CHECK_FALSE(fetched->records.empty());

  // Closing the connections does not get round the cap: the fetches still sit in their replica.
  parkers.clear();
  const int64_t not_parked = node.metric("capstan_rpc_fetches_not_parked_total");
  raw_rpc_client again(node.rpc_port(), 5s);
  REQUIRE(again.send_bootstrap());
  for (int i = 0; i < 10; ++i) REQUIRE(again.send_fetch("idle", 0, 0, 1 << 20, 1, 300000));
  CHECK(node.wait_metric("capstan_rpc_fetches_not_parked_total", [&](int64_t v) {
    return v == not_parked + 10;
  }) == not_parked + 10);
  CHECK(node.metric("capstan_rpc_parked_fetches") == 4000);
}
