// A Kafka client no one here wrote against a real `capstan node`: Debian's kcat (librdkafka)
// lists the node's brokers and topics through the Kafka listener (docs/kafka.md).

#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "tests/support/child_process.hpp"
#include "tests/support/node_process.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace std::chrono_literals;

TEST_CASE("kcat -L lists the node at its Kafka listener and its topics with their partitions",
          "[system][kafka]") {
  if (!std::filesystem::exists("/usr/bin/kcat")) {
    WARN("no /usr/bin/kcat (Debian package kcat): nothing to run");
    return;
  }
  test::temp_dir dir;
  test::node_process_options options;
  options.binary = CAPSTAN_BINARY;
  test::node_process node{dir, 1, options};
  node.start();
  std::string out, err;
  REQUIRE(test::run_to_end(CAPSTAN_BINARY,
                           {"topic", "create", "orders", "--partitions", "3", "--bootstrap",
                            node.bootstrap()},
                           dir.path(), &out, &err) == 0);
  const std::string broker = "127.0.0.1:" + std::to_string(node.kafka_port());
  REQUIRE(test::run_to_end("/usr/bin/kcat", {"-L", "-b", broker, "-m", "10"}, dir.path(), &out,
                           &err, 30s) == 0);
  INFO(out << err);
  CHECK(out.find("broker 1 at " + broker + " (controller)") != std::string::npos);
  CHECK(out.find("topic \"orders\" with 3 partitions:") != std::string::npos);
  CHECK(out.find("partition 2, leader 1, replicas: 1, isrs: 1") != std::string::npos);
  REQUIRE(test::run_to_end("/usr/bin/kcat", {"-L", "-b", broker, "-t", "missing", "-m", "10"},
                           dir.path(), &out, &err, 30s) == 0);
  CHECK(out.find("Unknown topic or partition") != std::string::npos);
  node.stop();
}
