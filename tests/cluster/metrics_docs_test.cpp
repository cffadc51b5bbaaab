// docs/metrics.md names exactly the metrics a node's /metrics endpoint serves: a metric the docs
// promise that no code fills, or one the node serves without a line in the docs, fails here.

#include <catch2/catch.hpp>

#include <chrono>
#include <sstream>
#include <thread>

#include "actors/node/node.hpp"
#include "runtime/client/cluster_client.hpp"
#include "tests/support/doc_tables.hpp"
#include "tests/support/http_get.hpp"
#include "tests/support/log_builder.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

// The metric families of a Prometheus text page: the name of each "# TYPE" line.
std::set<std::string> families(const std::string& text) {
  std::set<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# TYPE ", 0) != 0) continue;
    std::istringstream words(line.substr(7));
    std::string name;
    words >> name;
    out.insert(name);
  }
  return out;
}

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
           std::chrono::system_clock::now().time_since_epoch())
    .count();
}

} // namespace

TEST_CASE("a node's /metrics serves every metric docs/metrics.md lists, and no other",
          "[cluster][metrics][docs]") {
  const auto documented = doc_table_names(docs_page("metrics.md"), "metric");
  REQUIRE_FALSE(documented.empty());

  temp_dir dir;
  node_config config;
  config.data_dir = dir.path();
  config.listen = "127.0.0.1:0";
  config.cluster_listen = "127.0.0.1:0";
  config.metrics_listen = "127.0.0.1:0";
  config.kafka_listen = "127.0.0.1:0";
  auto n = node::start(config);
  INFO((n ? std::string() : n.err().to_string()));
  REQUIRE(n);
  {
    client::client_config cc;
    cc.bootstrap = {"127.0.0.1:" + std::to_string((*n)->rpc_port())};
    auto c = client::cluster_client::connect(cc);
    REQUIRE(c);
    // A refusal creates the error counter's first series, a produce the per-partition gauges.
    CHECK((*c)->create_topic(topic_spec{"t", 0, 1, {}}).code() == errc::invalid_partitions);
    REQUIRE((*c)->create_topic(topic_spec{"t", 1, 1, {}}));
    REQUIRE((*c)->produce_sync("t", 0, -1, make_batch(1, "r", now_ms())));
  }

  // The refresher fills its gauges in the background; the first round runs when it starts.
  std::string text;
  std::set<std::string> served;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (std::chrono::steady_clock::now() < deadline) {
    text = scrape_metrics((*n)->metrics_port());
    served = families(text);
    if (names_missing_from(documented, served).empty()) break;
    std::this_thread::sleep_for(50ms);
  }
  CHECK(names_missing_from(documented, served) == std::set<std::string>{});
  CHECK(names_missing_from(served, documented) == std::set<std::string>{});
  // The node alone is the controller and leads both partitions.
  CHECK(text.find("capstan_active_controller_count 1\n") != std::string::npos);
  CHECK(text.find("capstan_offline_partitions 0\n") != std::string::npos);
  CHECK(text.find("capstan_under_replicated_partitions 0\n") != std::string::npos);
  (*n)->stop();
}
