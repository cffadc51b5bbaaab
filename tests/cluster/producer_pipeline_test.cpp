// The producer over the real client and a node: with five requests in flight and batches that
// fill quickly, batches leave from the callers' threads and from the client's loop thread (which
// sends the next one as an answer frees its slot). Their sequences must reach the node in the
// order they were stamped.

#include <catch2/catch.hpp>

#include <atomic>
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

TEST_CASE("a producer's batches sent from its callers and its client's loop reach a node in "
          "sequence order",
          "[cluster][producer]") {
  temp_dir dir;
  auto n = node::start(loopback_node_config(dir.path()));
  INFO((n ? std::string() : n.err().to_string()));
  REQUIRE(n);
  {
    auto client = connect_client(**n);
    REQUIRE(client->create_topic(topic_spec{"t", 1, 1, {}}));
    client::client_config config;
    config.acks = -1;
    config.linger_ms = 0;
    config.batch_size = 256; // two records a batch: many batches, each soon full
    config.max_in_flight = 5;
    client::producer p(*client, config);
    constexpr int records = 20000;
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
  // A batch that overtook an earlier one was refused and resent: the retry hides it from the
  // callers, not from the node's error counter.
  const auto text = scrape_metrics((*n)->metrics_port());
  CHECK(text.find("capstan_rpc_requests_total{method=\"produce\"}") != std::string::npos);
  CHECK(text.find("OUT_OF_ORDER_SEQUENCE_NUMBER") == std::string::npos);
  (*n)->stop();
}
