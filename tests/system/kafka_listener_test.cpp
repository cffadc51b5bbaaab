// A Kafka client no one here wrote against real `capstan node` processes: Debian's kcat
// (librdkafka) lists the brokers and topics through the Kafka listener (docs/kafka.md), on one
// node and on a cluster, where any node names every node's own Kafka listener; and produces and
// consumes records that the native CLI reads and writes too.

#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/message_codec.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/node_cluster.hpp"
#include "tests/support/node_process.hpp"
#include "tests/support/raw_kafka_client.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace std::chrono_literals;

namespace {

// One FindCoordinator v`version` request for `group` on a fresh connection to 127.0.0.1:`port`;
// the decoded response, nullopt if the connection failed or closed first (each wait bounded).
std::optional<kafka::response> find_coordinator(uint16_t port, const std::string& group,
                                                int16_t version) {
  test::raw_kafka_client client(port, 10s, 10s);
  if (!client.connected()) return std::nullopt;
  auto body = kafka::make_message(kafka::find_coordinator_api, kafka::message_kind::request);
  body["Key"] = kafka::value(group);
  if (!client.send(kafka::find_coordinator_api, version, 3, body)) return std::nullopt;
  auto r = client.receive(kafka::find_coordinator_api, version);
  if (!r) return std::nullopt;
  return std::move(*r);
}

} // namespace

TEST_CASE("kcat -L lists the node at its Kafka listener and its topics with their partitions",
          "[system][kafka]") {
  // scripts/setup.sh installs it.
  INFO("/usr/bin/kcat (Debian package kcat) is missing: run scripts/setup.sh");
  REQUIRE(std::filesystem::exists("/usr/bin/kcat"));
  test::temp_dir dir;
  test::node_process_options options;
  options.binary = CAPSTAN_BINARY;
  test::node_process node{dir, 1, options};
  node.start();
  std::string out, err;
  test::create_topic(node, dir, "orders", 3);
  const std::string broker = node.kafka_bootstrap();
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
  // scripts/setup.sh installs it.
  INFO("/usr/bin/kcat (Debian package kcat) is missing: run scripts/setup.sh");
  REQUIRE(std::filesystem::exists("/usr/bin/kcat"));
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
  // scripts/setup.sh installs it.
  INFO("/usr/bin/kcat (Debian package kcat) is missing: run scripts/setup.sh");
  REQUIRE(std::filesystem::exists("/usr/bin/kcat"));
  test::temp_dir dir;
  test::node_process_options options;
  options.binary = CAPSTAN_BINARY;
  test::node_process node{dir, 1, options};
  node.start();
  std::string out, err;
  test::create_topic(node, dir, "lines", 3);
  const std::string broker = node.kafka_bootstrap();
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

TEST_CASE("FindCoordinator through the Kafka listener names the group's coordinator at its Kafka "
          "listener once the offsets topic has a leader",
          "[system][kafka]") {
  test::temp_dir dir;
  test::node_process_options options;
  options.binary = CAPSTAN_BINARY;
  test::node_process node{dir, 1, options};
  node.start();
  for (int16_t version : {int16_t{0}, int16_t{3}}) {
    INFO("version " << version);
    std::optional<kafka::response> last;
    // The group's first call has the controller create __consumer_offsets; until its partition
    // has a leader the answer is COORDINATOR_NOT_AVAILABLE (15), and the client asks again.
    const bool found = test::eventually(
        [&] {
          last = find_coordinator(node.kafka_port(), "readers", version);
          return last && last->body["ErrorCode"].as_int() == 0;
        },
        60s);
    REQUIRE(found);
    CHECK(last->correlation_id == 3);
    CHECK(last->body["NodeId"].as_int() == 1);
    CHECK(last->body["Host"].as_string() == "127.0.0.1");
    CHECK(last->body["Port"].as_int() == node.kafka_port());
  }
  node.stop();
}

TEST_CASE("an idempotent kcat producer gets a producer id and each of its records is stored once",
          "[system][kafka]") {
  // scripts/setup.sh installs it.
  INFO("/usr/bin/kcat (Debian package kcat) is missing: run scripts/setup.sh");
  REQUIRE(std::filesystem::exists("/usr/bin/kcat"));
  test::temp_dir dir;
  test::node_process_options options;
  options.binary = CAPSTAN_BINARY;
  test::node_process node{dir, 1, options};
  node.start();
  std::string out, err;
  test::create_topic(node, dir, "idem", 2);
  const std::string broker = node.kafka_bootstrap();
  REQUIRE(test::run_to_end("/bin/sh",
                           {"-c", "seq 1 20 | /usr/bin/kcat -P -b " + broker +
                                      " -t idem -X enable.idempotence=true -d eos"},
                           dir.path(), &out, &err, 30s) == 0);
  INFO(err);
  CHECK(err.find("Acquired PID") != std::string::npos);
  REQUIRE(test::run_to_end("/usr/bin/kcat",
                           {"-C", "-b", broker, "-t", "idem", "-o", "beginning", "-e", "-q"},
                           dir.path(), &out, &err, 30s) == 0);
  std::multiset<std::string> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) lines.insert(line);
  CHECK(lines.size() == 20);
  for (int i = 1; i <= 20; ++i) CHECK(lines.count(std::to_string(i)) == 1);
  node.stop();
}
