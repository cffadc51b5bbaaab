#include <catch2/catch.hpp>

#include <fstream>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

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
listeners = "CAPSTAN://0.0.0.0:19092,PLAINTEXT://0.0.0.0:19095"
advertised.listeners = "PLAINTEXT://broker7.example:9092"
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
  CHECK(c->listen == "CAPSTAN://0.0.0.0:19092");
  CHECK(c->kafka_listen == "PLAINTEXT://0.0.0.0:19095");
  CHECK(c->kafka_advertised == "PLAINTEXT://broker7.example:9092");
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

TEST_CASE("client connection bounds are set by Kafka's names and capstan's own", "[node][config]") {
  temp_dir dir;
  const node_config defaults;
  CHECK(defaults.client_limits.max_connections == default_max_connections());
  CHECK(defaults.client_limits.max_connections_per_ip == std::numeric_limits<int32_t>::max());
  CHECK(defaults.client_limits.socket_request_max_bytes == 104857600);
  auto c = load(dir, R"(
max.connections = 100
"max.connections.per.ip" = 10
socket.request.max.bytes = 2097152
queued.max.request.bytes.per.connection = 1048576
queued.max.response.bytes.per.connection = 2048
queued.max.responses.per.connection = 16
queued.max.requests = 12
fetch.max.parked.per.connection = 7
fetch.max.parked.per.node = 70
)");
  INFO((c ? std::string() : c.err().to_string()));
  REQUIRE(c);
  CHECK(c->client_limits.max_connections == 100);
  CHECK(c->client_limits.max_connections_per_ip == 10);
  CHECK(c->client_limits.socket_request_max_bytes == 2097152);
  CHECK(c->client_limits.queued_max_request_bytes_per_connection == 1048576);
  CHECK(c->client_limits.queued_max_response_bytes_per_connection == 2048);
  CHECK(c->client_limits.queued_max_responses_per_connection == 16);
  CHECK(c->client_limits.queued_max_requests == 12);
  CHECK(c->client_limits.fetch_max_parked_per_connection == 7);
  CHECK(c->client_limits.fetch_max_parked_per_node == 70);
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
    {"listeners = \"SSL://127.0.0.1:9093\"\n", "listeners: listener 'SSL'"},
    {"listeners = \"PLAINTEXT://a:1,PLAINTEXT://b:2\"\n", "two PLAINTEXT listeners"},
    {"advertised.listeners = \"PLAINTEXT://a:0\"\n", "advertised.listeners: port 0"},
    {"advertised.listeners = \"CAPSTAN://a:1\"\n", "advertised.listeners: only the PLAINTEXT"},
    {"log.segment.bytes = 3\n", "log.segment.bytes"},
    {"log.cleanup.policy = \"shred\"\n", "log.cleanup.policy"},
    {"min.insync.replicas = 0\n", "min.insync.replicas"},
    {"log.dirs = \"a,b\"\n", "log.dirs"},
    {"num.partitions = [[1]]\n", "num.partitions"},
    {"max.connections = 0\n", "max.connections"},
    {"max.connections.per.ip = 0\n", "max.connections.per.ip"},
    {"socket.request.max.bytes = 1000\n", "socket.request.max.bytes"},
    {"queued.max.request.bytes.per.connection = 0\n", "queued.max.request.bytes.per.connection"},
    {"fetch.max.parked.per.node = -1\n", "fetch.max.parked.per.node"},
    {"queued.max.responses.per.connection = 0\n", "queued.max.responses.per.connection"},
    {"queued.max.requests = 0\n", "queued.max.requests"},
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

TEST_CASE("a value of the wrong TOML type is INVALID_CONFIG naming the key and the type it takes",
          "[node][config]") {
  temp_dir dir;
  const std::vector<std::pair<std::string, std::string>> rows = {
    {"log.dirs = 5\n", "log.dirs: must be a string"},
    {"log.dir = true\n", "log.dir: must be a string"},
    {"listeners = 9192\n", "listeners: must be a string"},
    {"cluster.id = 7\n", "cluster.id: must be a string"},
    {"node.id = \"3\"\n", "node.id: must be an integer"},
    {"num.partitions = 1.5\n", "num.partitions: must be an integer"},
    {"log.segment.bytes = \"1048576\"\n", "log.segment.bytes: must be an integer"},
    {"log.retention.hours = \"1\"\n", "log.retention.hours: must be an integer"},
    {"log.cleanup.policy = 1\n", "log.cleanup.policy: must be a string"},
  };
  for (const auto& [text, named] : rows) {
    INFO(text);
    auto c = load(dir, text);
    REQUIRE_FALSE(c);
    CHECK(c.code() == errc::invalid_config);
    CHECK(c.err().message.find(named) != std::string::npos);
  }
  CHECK_FALSE(std::filesystem::exists(dir / "5"));
  auto ratio = load(dir, "log.cleaner.min.cleanable.ratio = 1\nlog.dirs = [\"/data\"]\n");
  INFO((ratio ? std::string() : ratio.err().to_string()));
  REQUIRE(ratio);
  CHECK(ratio->data_dir == "/data");
}

TEST_CASE("two names of one setting must agree", "[node][config]") {
  temp_dir dir;
  auto conflicting = load(dir, "node.id = 1\nbroker.id = 2\n");
  REQUIRE_FALSE(conflicting);
  CHECK(conflicting.code() == errc::invalid_config);
  CHECK(conflicting.err().message.find("node.id = 1 and broker.id = 2") != std::string::npos);
  auto dirs = load(dir, "log.dirs = \"/a\"\nlog.dir = \"/b\"\n");
  REQUIRE_FALSE(dirs);
  CHECK(dirs.err().message.find("log.dirs") != std::string::npos);
  auto agreeing = load(dir, "node.id = 3\nbroker.id = 3\n");
  REQUIRE(agreeing);
  CHECK(agreeing->node_id == 3);
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

TEST_CASE("a listener whose port is taken is named, and said to be in use", "[node][config]") {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(fd, 1) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  const listen_address taken{"127.0.0.1", ntohs(addr.sin_port)};
  const std::string where = "127.0.0.1:" + std::to_string(taken.port);

  CHECK(address_in_use(taken));
  auto e = listen_failure("cluster listener", taken, "system_error(cannot_open_port)");
  CHECK(e.code == errc::network_exception);
  CHECK(e.message == "cluster listener " + where + " is in use (another process listens there)");

  ::close(fd);
  CHECK_FALSE(address_in_use(taken));
  auto other = listen_failure("metrics listener", taken, "permission denied");
  CHECK(other.message == "metrics listener " + where + ": permission denied");
}

TEST_CASE("broker timestamp windows, schedules and the partition cap are read by Kafka's names",
          "[node][config]") {
  temp_dir dir;
  auto c = load(dir, R"(
max.broker.partitions = 50
log.message.timestamp.before.max.ms = 86400000
log.message.timestamp.after.max.ms = 60000
log.retention.check.interval.ms = 1000
log.cleaner.backoff.ms = 30000
producer.id.expiration.ms = 3600000
)");
  INFO((c ? std::string() : c.err().to_string()));
  REQUIRE(c);
  CHECK(c->max_broker_partitions == 50);
  CHECK(c->log_defaults.timestamp_before_max_ms == 86400000);
  CHECK(c->log_defaults.timestamp_after_max_ms == 60000);
  CHECK(c->log_defaults.retention_check_interval_ms == 1000);
  CHECK(c->log_defaults.cleaner_backoff_ms == 30000);
  CHECK(c->log_defaults.producer_id_expiration_ms == 3600000);
  CHECK(node_config{}.max_broker_partitions == default_max_broker_partitions());
}

TEST_CASE("zero or tiny schedules and limits are INVALID_CONFIG naming the key", "[node][config]") {
  temp_dir dir;
  const std::vector<std::pair<std::string, std::string>> rows = {
    {"log.cleaner.backoff.ms = 0\n", "log.cleaner.backoff.ms"},
    {"log.retention.check.interval.ms = 10\n", "log.retention.check.interval.ms"},
    {"max.broker.partitions = 0\n", "max.broker.partitions"},
    {"log.message.timestamp.after.max.ms = -1\n", "log.message.timestamp.after.max.ms"},
    {"log.roll.ms = 1\n", "log.roll.ms"},
    {"log.segment.bytes = 14\n", "log.segment.bytes"},
    {"producer.id.expiration.ms = 0\n", "producer.id.expiration.ms"},
  };
  for (const auto& [text, named] : rows) {
    INFO(text);
    auto c = load(dir, text);
    REQUIRE_FALSE(c);
    CHECK(c.code() == errc::invalid_config);
    CHECK(c.err().message.find(named) != std::string::npos);
  }
}

TEST_CASE("log.flush.offset.checkpoint.interval.ms sets how often checkpoints are written",
          "[node][config]") {
  temp_dir dir;
  CHECK(node_config{}.checkpoint_interval_ms == 60000);
  auto c = load(dir, "log.flush.offset.checkpoint.interval.ms = 5000\n");
  REQUIRE(c);
  CHECK(c->checkpoint_interval_ms == 5000);
  auto zero = load(dir, "log.flush.offset.checkpoint.interval.ms = 0\n");
  REQUIRE_FALSE(zero);
  CHECK(zero.code() == errc::invalid_config);
}

TEST_CASE("num.log.io.workers sets the partition logs' I/O workers, 1 to 256", "[node][config]") {
  temp_dir dir;
  CHECK(node_config{}.io_workers == 2);
  auto c = load(dir, "num.log.io.workers = 8\n");
  REQUIRE(c);
  CHECK(c->io_workers == 8);
  for (const char* text : {"num.log.io.workers = 0\n", "num.log.io.workers = 257\n"}) {
    INFO(text);
    auto bad = load(dir, text);
    REQUIRE_FALSE(bad);
    CHECK(bad.code() == errc::invalid_config);
    CHECK(bad.err().message.find("num.log.io.workers") != std::string::npos);
  }
}

TEST_CASE("actor.scheduler.policy is work-stealing by default, or sharing", "[node][config]") {
  temp_dir dir;
  CHECK_FALSE(node_config{}.scheduler_sharing);
  auto c = load(dir, "actor.scheduler.policy = \"sharing\"\n");
  REQUIRE(c);
  CHECK(c->scheduler_sharing);
  for (const char* text :
       {"actor.scheduler.policy = \"stealing\"\n", "actor.scheduler.policy = 1\n"}) {
    INFO(text);
    auto bad = load(dir, text);
    REQUIRE_FALSE(bad);
    CHECK(bad.code() == errc::invalid_config);
    CHECK(bad.err().message.find("actor.scheduler.policy") != std::string::npos);
  }
}

TEST_CASE("replication settings are read by Kafka's names, with Kafka's defaults", "[node][config]") {
  temp_dir dir;
  const node_config defaults;
  CHECK(defaults.replica_lag_time_max_ms == 30000);
  CHECK(defaults.num_replica_fetchers == 1);
  CHECK(defaults.replica_fetcher.partition_max_bytes == 1048576);
  CHECK(defaults.replica_fetcher.response_max_bytes == 10485760);
  CHECK(defaults.replica_fetcher.min_bytes == 1);
  CHECK(defaults.replica_fetcher.max_wait_ms == 500);
  CHECK(defaults.replica_fetcher.backoff_ms == 1000);
  CHECK(defaults.replica_fetcher.request_timeout_ms == 30000);
  auto c = load(dir, R"(
replica.lag.time.max.ms = 2000
num.replica.fetchers = 3
replica.fetch.max.bytes = 65536
replica.fetch.response.max.bytes = 131072
replica.fetch.min.bytes = 10
replica.fetch.wait.max.ms = 100
replica.fetch.backoff.ms = 50
replica.socket.timeout.ms = 3000
)");
  INFO((c ? std::string() : c.err().to_string()));
  REQUIRE(c);
  CHECK(c->replica_lag_time_max_ms == 2000);
  CHECK(c->num_replica_fetchers == 3);
  CHECK(c->replica_fetcher.partition_max_bytes == 65536);
  CHECK(c->replica_fetcher.response_max_bytes == 131072);
  CHECK(c->replica_fetcher.min_bytes == 10);
  CHECK(c->replica_fetcher.max_wait_ms == 100);
  CHECK(c->replica_fetcher.backoff_ms == 50);
  CHECK(c->replica_fetcher.request_timeout_ms == 3000);
}

TEST_CASE("replication settings out of range or at odds are INVALID_CONFIG naming the keys",
          "[node][config]") {
  temp_dir dir;
  const std::vector<std::pair<std::string, std::vector<std::string>>> rows = {
    {"replica.lag.time.max.ms = 0\n", {"replica.lag.time.max.ms"}},
    {"num.replica.fetchers = 0\n", {"num.replica.fetchers"}},
    {"replica.fetch.max.bytes = -1\n", {"replica.fetch.max.bytes"}},
    {"replica.fetch.response.max.bytes = -1\n", {"replica.fetch.response.max.bytes"}},
    {"replica.fetch.min.bytes = -1\n", {"replica.fetch.min.bytes"}},
    {"replica.fetch.wait.max.ms = -1\n", {"replica.fetch.wait.max.ms"}},
    {"replica.fetch.backoff.ms = -1\n", {"replica.fetch.backoff.ms"}},
    {"replica.socket.timeout.ms = 0\n", {"replica.socket.timeout.ms"}},
    // Kafka's checks across keys.
    {"replica.fetch.wait.max.ms = 600\nreplica.socket.timeout.ms = 500\n",
     {"replica.fetch.wait.max.ms", "replica.socket.timeout.ms"}},
    {"replica.lag.time.max.ms = 400\n", {"replica.fetch.wait.max.ms", "replica.lag.time.max.ms"}},
  };
  for (const auto& [text, named] : rows) {
    INFO(text);
    auto c = load(dir, text);
    REQUIRE_FALSE(c);
    CHECK(c.code() == errc::invalid_config);
    for (const auto& key : named) CHECK(c.err().message.find(key) != std::string::npos);
  }
}

TEST_CASE("the periodic leader rebalance takes Kafka's keys and defaults", "[node][config]") {
  const node_config defaults;
  CHECK(defaults.auto_leader_rebalance_enable);
  CHECK(defaults.leader_imbalance_check_interval_seconds == 300);
  CHECK(defaults.leader_imbalance_per_broker_percentage == 10);
  auto c = node_config::from_toml("auto.leader.rebalance.enable = false\n"
                                  "leader.imbalance.check.interval.seconds = 5\n"
                                  "leader.imbalance.per.broker.percentage = 0\n",
                                  "inline.toml", node_config{});
  REQUIRE(c);
  CHECK_FALSE(c->auto_leader_rebalance_enable);
  CHECK(c->leader_imbalance_check_interval_seconds == 5);
  CHECK(c->leader_imbalance_per_broker_percentage == 0);
  for (const char* bad : {"auto.leader.rebalance.enable = \"yes\"\n",
                          "leader.imbalance.check.interval.seconds = 0\n",
                          "leader.imbalance.per.broker.percentage = 101\n"}) {
    INFO(bad);
    auto b = node_config::from_toml(bad, "inline.toml", node_config{});
    REQUIRE_FALSE(b);
    CHECK(b.code() == errc::invalid_config);
  }
}

TEST_CASE("group membership bounds take Kafka's keys and defaults, and a minimum session timeout "
          "above the maximum is INVALID_CONFIG naming both",
          "[node][config]") {
  const node_config defaults;
  CHECK(defaults.group_membership_limits.min_session_timeout_ms == 6000);
  CHECK(defaults.group_membership_limits.max_session_timeout_ms == 1800000);
  CHECK(defaults.group_membership_limits.initial_rebalance_delay_ms == 3000);
  CHECK(defaults.group_membership_limits.max_size == INT32_MAX);
  auto c = node_config::from_toml("group.min.session.timeout.ms = 1000\n"
                                  "group.max.session.timeout.ms = 60000\n"
                                  "group.initial.rebalance.delay.ms = 0\n"
                                  "group.max.size = 10\n",
                                  "inline.toml", node_config{});
  REQUIRE(c);
  CHECK(c->group_membership_limits.min_session_timeout_ms == 1000);
  CHECK(c->group_membership_limits.max_session_timeout_ms == 60000);
  CHECK(c->group_membership_limits.initial_rebalance_delay_ms == 0);
  CHECK(c->group_membership_limits.max_size == 10);
  const std::vector<std::pair<std::string, std::vector<std::string>>> rows = {
    {"group.min.session.timeout.ms = 0\n", {"group.min.session.timeout.ms"}},
    {"group.initial.rebalance.delay.ms = -1\n", {"group.initial.rebalance.delay.ms"}},
    {"group.max.size = 0\n", {"group.max.size"}},
    {"group.min.session.timeout.ms = 7000\ngroup.max.session.timeout.ms = 6999\n",
     {"group.min.session.timeout.ms", "group.max.session.timeout.ms"}},
  };
  for (const auto& [text, named] : rows) {
    INFO(text);
    auto b = node_config::from_toml(text, "inline.toml", node_config{});
    REQUIRE_FALSE(b);
    CHECK(b.code() == errc::invalid_config);
    for (const auto& key : named) CHECK(b.err().message.find(key) != std::string::npos);
  }
}

TEST_CASE("the Kafka listener is on 127.0.0.1:9092 by default and off when listeners has no "
          "PLAINTEXT entry",
          "[node][config]") {
  temp_dir dir;
  CHECK(node_config{}.kafka_listen == "127.0.0.1:9092");
  auto native_only = load(dir, "listeners = \"127.0.0.1:19092\"\n");
  REQUIRE(native_only);
  CHECK(native_only->listen == "127.0.0.1:19092");
  CHECK(native_only->kafka_listen.empty());
  auto kafka_only = load(dir, "listeners = \"PLAINTEXT://127.0.0.1:19095\"\n");
  REQUIRE(kafka_only);
  CHECK(kafka_only->listen == node_config{}.listen);
  CHECK(kafka_only->kafka_listen == "PLAINTEXT://127.0.0.1:19095");
}
