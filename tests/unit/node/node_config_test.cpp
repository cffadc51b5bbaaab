#include <catch2/catch.hpp>

#include <fstream>

#include "actors/node/listen_address.hpp"
#include "actors/node/node.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace capstan::test;

namespace {

result<node_config> load(const temp_dir& dir, const std::string& text, node_config base = {}) {
  const auto file = dir / "node.toml";
  {
    std::ofstream out(file, std::ios::trunc);
    out << text;
  }
  return node_config::from_toml_file(file, std::move(base));
}

} // namespace

TEST_CASE("a TOML config sets node keys and broker log defaults by Kafka's names", "[node][config]") {
  temp_dir dir;
  auto c = load(dir, R"(
node.id = 7
"log.dirs" = "/var/lib/capstan"
listeners = "PLAINTEXT://0.0.0.0:19092"
cluster.listeners = "127.0.0.1:19093"
metrics.listeners = "127.0.0.1:0"
controller.quorum.voters = "7@127.0.0.1:19093"
min.insync.replicas = 2
num.partitions = 6
default.replication.factor = 1
offsets.topic.num.partitions = 5
message.max.bytes = 2000000

[log]
segment.bytes = 1048576
retention.hours = 48
cleanup.policy = "compact"
flush.interval.messages = 1000
)");
  INFO((c ? std::string() : c.err().to_string()));
  REQUIRE(c);
  CHECK(c->node_id == 7);
  CHECK(c->data_dir == "/var/lib/capstan");
  CHECK(c->listen == "PLAINTEXT://0.0.0.0:19092");
  CHECK(c->cluster_listen == "127.0.0.1:19093");
  CHECK(c->metrics_listen == "127.0.0.1:0");
  CHECK(c->controller_quorum == "7@127.0.0.1:19093");
  CHECK(c->min_insync_replicas == 2);
  CHECK(c->default_partitions == 6);
  CHECK(c->offsets_topic_partitions == 5);
  CHECK(c->log_defaults.max_message_bytes == 2000000);
  CHECK(c->log_defaults.segment_bytes == 1048576);
  CHECK(c->log_defaults.retention_ms == 48 * 3600000LL);
  CHECK(c->log_defaults.cleanup == cleanup_policy::compact);
  CHECK(c->log_defaults.flush_messages == 1000);
}

TEST_CASE("log.retention.ms wins over log.retention.hours", "[node][config]") {
  temp_dir dir;
  auto c = load(dir, "log.retention.hours = 1\nlog.retention.ms = 5000\n");
  REQUIRE(c);
  CHECK(c->log_defaults.retention_ms == 5000);
}

TEST_CASE("keys absent from the file keep the base config", "[node][config]") {
  temp_dir dir;
  node_config base;
  base.node_id = 4;
  base.listen = "127.0.0.1:0";
  auto c = load(dir, "num.partitions = 3\n", base);
  REQUIRE(c);
  CHECK(c->node_id == 4);
  CHECK(c->listen == "127.0.0.1:0");
  CHECK(c->default_partitions == 3);
}

TEST_CASE("bad config files are INVALID_CONFIG naming the key", "[node][config]") {
  temp_dir dir;
  const std::vector<std::pair<std::string, std::string>> rows = {
    {"no.such.key = 1\n", "no.such.key"},
    {"node.id = -1\n", "node.id"},
    {"node.id = \"x\"\n", "node.id"},
    {"listeners = \"nohostport\"\n", "listeners"},
    {"listeners = \"127.0.0.1:70000\"\n", "listeners"},
    {"log.segment.bytes = 3\n", "log.segment.bytes"},
    {"log.cleanup.policy = \"shred\"\n", "log.cleanup.policy"},
    {"min.insync.replicas = 0\n", "min.insync.replicas"},
    {"log.dirs = \"a,b\"\n", "log.dirs"},
    {"num.partitions = [[1]]\n", "num.partitions"},
    {"this is not toml\n", "node.toml"},
  };
  for (const auto& [text, named] : rows) {
    INFO(text);
    auto c = load(dir, text);
    REQUIRE_FALSE(c);
    CHECK(c.code() == errc::invalid_config);
    CHECK(c.err().message.find(named) != std::string::npos);
  }
}

TEST_CASE("TOML text is applied as a file is, errors naming the given source", "[node][config]") {
  auto c = node_config::from_toml("node.id = 3\n[log]\nretention.ms = 5000\n", "inline.toml",
                                  node_config{});
  REQUIRE(c);
  CHECK(c->node_id == 3);
  CHECK(c->log_defaults.retention_ms == 5000);

  for (const char* bad : {"node.id = -1\n", "this is not toml\n"}) {
    INFO(bad);
    auto b = node_config::from_toml(bad, "inline.toml", node_config{});
    REQUIRE_FALSE(b);
    CHECK(b.code() == errc::invalid_config);
    CHECK(b.err().message.find("inline.toml") != std::string::npos);
  }
}

TEST_CASE("listen addresses are HOST:PORT, with an optional listener name", "[node][config]") {
  auto a = parse_listen_address("127.0.0.1:9192", "listen");
  REQUIRE(a);
  CHECK(a->host == "127.0.0.1");
  CHECK(a->port == 9192);
  a = parse_listen_address("PLAINTEXT://localhost:0", "listen");
  REQUIRE(a);
  CHECK(a->host == "localhost");
  CHECK(a->port == 0);
  a = parse_listen_address("[::1]:80", "listen");
  REQUIRE(a);
  CHECK(a->host == "::1");
  for (const char* bad : {"", "9192", ":9192", "host:", "host:x", "host:65536", "host:-1"}) {
    INFO(bad);
    auto b = parse_listen_address(bad, "--listen");
    REQUIRE_FALSE(b);
    CHECK(b.code() == errc::invalid_config);
    CHECK(b.err().message.find("--listen") != std::string::npos);
  }
}
