// The producer over the real client and a node, with five requests in flight: batches leave from
// the callers' threads and from the client's loop thread (which sends the next one as an answer
// frees its slot), and their sequences must reach the node in the order they were stamped; while
// the window is full, batches grow past batch.size as far as the topic's max.message.bytes
// allows. A blocking call from a callback (on the client's loop thread), such as a send to a topic
// the producer has not learnt, fails at once instead of waiting for that thread.

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <numeric>
#include <string>
#include <vector>

#include "actors/node/node.hpp"
#include "runtime/client/producer.hpp"
#include "tests/support/http_get.hpp"
#include "tests/support/loopback_node.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace capstan::test;

namespace {

constexpr int records = 20000;

// Sends `records` records of 100 bytes to partition 0 of "t" and checks that every one was
// acknowledged, at consecutive offsets in sending order.
void produce_in_order(client::cluster_client& client, const client::client_config& config) {
  client::producer p(client, config);
  const std::string value(100, 'v');
  std::mutex mu;
  std::vector<int64_t> offsets;
  std::atomic<int> failed{0};
  for (int i = 0; i < records; ++i)
    p.send("t", std::nullopt,
           bytes_view(reinterpret_cast<const uint8_t*>(value.data()), value.size()), 0,
           [&](result<client::record_metadata> r) {
             if (!r) {
               ++failed;
               return;
             }
             std::lock_guard lock(mu);
             offsets.push_back(r->off.value());
           });
  p.flush();
  CHECK(failed == 0);
  std::vector<int64_t> in_order(records);
  std::iota(in_order.begin(), in_order.end(), 0);
  CHECK(offsets == in_order);
}

client::client_config five_in_flight(int32_t batch_size, int32_t batch_max_size) {
  client::client_config config;
  config.acks = -1;
  config.linger_ms = 0;
  config.batch_size = batch_size;
  config.batch_max_size = batch_max_size;
  config.max_in_flight = 5;
  return config;
}

// The produce requests the node has counted.
double produce_requests(const std::string& metrics) {
  const std::string name = "capstan_rpc_requests_total{method=\"produce\"} ";
  const auto at = metrics.find(name);
  return at == std::string::npos ? -1 : std::stod(metrics.substr(at + name.size()));
}

// Starts a node with topic "t" (one partition, `topic_configs`), sends the records of
// produce_in_order with `config`, and returns the node's metrics.
std::string produce_to_a_node(const std::map<std::string, std::string>& topic_configs,
                              const client::client_config& config) {
  temp_dir dir;
  auto n = node::start(loopback_node_config(dir.path()));
  INFO((n ? std::string() : n.err().to_string()));
  REQUIRE(n);
  {
    auto client = connect_client(**n);
    REQUIRE(client->create_topic(topic_spec{"t", 1, 1, topic_configs}));
    produce_in_order(*client, config);
  }
  auto text = scrape_metrics((*n)->metrics_port());
  (*n)->stop();
  return text;
}

} // namespace

TEST_CASE("a producer's batches sent from its callers and its client's loop reach a node in "
          "sequence order",
          "[cluster][producer]") {
  // Two records a batch, never grown: many batches, each soon full.
  const auto text = produce_to_a_node({}, five_in_flight(256, 256));
  // A batch that overtook an earlier one was refused and resent: the retry hides it from the
  // callers, not from the node's error counter.
  CHECK(produce_requests(text) > 0);
  CHECK(text.find("OUT_OF_ORDER_SEQUENCE_NUMBER") == std::string::npos);
}

TEST_CASE("a producer's batches grow while its window is full, within half the topic's "
          "max.message.bytes",
          "[cluster][producer]") {
  // batch.max.size is far above what the topic takes: batches grow to 4096 bytes, not past.
  const auto text =
      produce_to_a_node({{"max.message.bytes", "8192"}}, five_in_flight(1024, 1 << 20));
  CHECK(text.find("MESSAGE_TOO_LARGE") == std::string::npos);
  // Batches of 1,024 bytes hold at most nine of these records; grown ones up to 36.
  const double requests = produce_requests(text);
  CHECK(requests > 0);
  CHECK(requests < records / 9.0);
}

TEST_CASE("a send from a callback to a topic the producer has not learnt fails at once, and the "
          "client goes on",
          "[cluster][producer]") {
  temp_dir dir;
  auto n = node::start(loopback_node_config(dir.path()));
  INFO((n ? std::string() : n.err().to_string()));
  REQUIRE(n);
  {
    auto client = connect_client(**n);
    REQUIRE(client->create_topic(topic_spec{"t", 1, 1, {}}));
    REQUIRE(client->create_topic(topic_spec{"u", 1, 1, {}}));
    client::producer p(*client, five_in_flight(16384, 16384));
    const std::string value(100, 'v');
    const bytes_view record(reinterpret_cast<const uint8_t*>(value.data()), value.size());
    // The callback runs on the client's loop thread; learning "u" there would need that thread.
    // So would any other blocking call, ListOffsets for one.
    std::promise<result<client::record_metadata>> inner;
    std::promise<result<int64_t>> listed;
    p.send("t", std::nullopt, record, 0, [&](result<client::record_metadata>) {
      listed.set_value(client->list_offsets("t", 0, -1));
      p.send("u", std::nullopt, record, 0,
             [&](result<client::record_metadata> r) { inner.set_value(std::move(r)); });
    });
    auto answered = inner.get_future();
    REQUIRE(answered.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
    const auto refused = answered.get();
    REQUIRE_FALSE(refused);
    CHECK(refused.code() == errc::invalid_request);
    const auto offsets = listed.get_future().get();
    REQUIRE_FALSE(offsets);
    CHECK(offsets.code() == errc::invalid_request);
    p.flush();

    // From a thread of its own, the same send learns the topic and is acknowledged.
    std::atomic<bool> acknowledged{false};
    p.send("u", std::nullopt, record, 0,
           [&](result<client::record_metadata> r) { acknowledged = r.ok(); });
    p.flush();
    CHECK(acknowledged);
  }
  (*n)->stop();
}
