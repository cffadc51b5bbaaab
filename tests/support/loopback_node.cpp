#include "tests/support/loopback_node.hpp"

#include <string>

#include <catch2/catch.hpp>

namespace capstan::test {

node_config loopback_node_config(const std::filesystem::path& data_dir, int32_t node_id) {
  node_config c;
  c.node_id = node_id;
  c.data_dir = data_dir;
  c.listen = "127.0.0.1:0";
  c.cluster_listen = "127.0.0.1:0";
  c.metrics_listen = "127.0.0.1:0";
  // Tests run in parallel: never Kafka's fixed default port.
  c.kafka_listen = "127.0.0.1:0";
  return c;
}

std::unique_ptr<client::cluster_client> connect_client(const node& n) {
  client::client_config cc;
  cc.bootstrap = {"127.0.0.1:" + std::to_string(n.rpc_port())};
  auto c = client::cluster_client::connect(cc);
  INFO((c ? std::string() : c.err().to_string()));
  REQUIRE(c);
  return std::move(*c);
}

} // namespace capstan::test
