// A Kafka client no one here wrote against real `capstan node` processes: Debian's kcat
// (librdkafka) lists the brokers and topics through the Kafka listener (docs/kafka.md), on one
// node and on a cluster, where any node names every node's own Kafka listener; and produces and
// consumes records that the native CLI reads and writes too.

#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "tests/support/child_process.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/node_cluster.hpp"
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

TEST_CASE("kcat -L through any node of a cluster lists every node at its own Kafka listener",
          "[system][kafka]") {
  if (!std::filesystem::exists("/usr/bin/kcat")) {
    WARN("no /usr/bin/kcat (Debian package kcat): nothing to run");
    return;
  }
  test::node_cluster cluster{CAPSTAN_BINARY, 0};
  cluster.create_topic("spread", 3, cluster.node(1), 2);
  std::vector<std::string> listed;
  for (int id = 1; id <= 3; ++id)
    listed.push_back("broker " + std::to_string(id) + " at 127.0.0.1:" +
                     std::to_string(cluster.node(id).kafka_port()));
  const std::string via = "127.0.0.1:" + std::to_string(cluster.node(3).kafka_port());
  std::string out, err;
  // The topic and every registration reach node 3 through UpdateMetadata.
  const bool complete = test::eventually(
      [&] {
        if (test::run_to_end("/usr/bin/kcat", {"-L", "-b", via, "-m", "10"}, cluster.dir.path(),
                             &out, &err, std::chrono::seconds(30)) != 0)
          return false;
        for (const auto& line : listed)
          if (out.find(line) == std::string::npos) return false;
        return out.find("topic \"spread\" with 2 partitions:") != std::string::npos;
      },
      std::chrono::seconds(60));
  INFO(out << err);
  CHECK(complete);
  CHECK(out.find("(controller)") != std::string::npos);
}

TEST_CASE("records kcat -P produces are read back by kcat -C and by capstan consume, and the "
          "other way round",
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
                           {"topic", "create", "lines", "--partitions", "3", "--bootstrap",
                            node.bootstrap()},
                           dir.path(), &out, &err) == 0);
  const std::string broker = "127.0.0.1:" + std::to_string(node.kafka_port());
  const auto input = dir.path() / "keyed.txt";
  {
    std::ofstream f(input);
    for (int i = 1; i <= 30; ++i) f << "k" << i << ":v" << i << "\n";
  }
  REQUIRE(test::run_to_end("/bin/sh",
                           {"-c", "/usr/bin/kcat -P -b " + broker + " -t lines -K: < '" +
                                      input.string() + "'"},
                           dir.path(), &out, &err, 30s) == 0);
  REQUIRE(test::run_to_end(CAPSTAN_BINARY,
                           {"consume", "lines", "--from-beginning", "--max-messages", "30",
                            "--bootstrap", node.bootstrap()},
                           dir.path(), &out, &err, 30s) == 0);
  for (int i = 1; i <= 30; ++i)
    CHECK(out.find("v" + std::to_string(i) + "\n") != std::string::npos);
  REQUIRE(test::run_to_end("/bin/sh",
                           {"-c", "printf 'native-1\\nnative-2\\n' | '" +
                                      std::string{CAPSTAN_BINARY} + "' produce lines --bootstrap " +
                                      node.bootstrap()},
                           dir.path(), &out, &err, 30s) == 0);
  const int consumed = test::run_to_end(
      "/usr/bin/kcat", {"-C", "-b", broker, "-t", "lines", "-o", "beginning", "-e", "-q"},
      dir.path(), &out, &err, 30s);
  INFO(out << err);
  REQUIRE(consumed == 0);
  for (int i = 1; i <= 30; ++i)
    CHECK(out.find("v" + std::to_string(i) + "\n") != std::string::npos);
  CHECK(out.find("native-1\n") != std::string::npos);
  CHECK(out.find("native-2\n") != std::string::npos);
  node.stop();
}
