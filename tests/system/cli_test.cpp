// Runs the real `capstan` binary: a node on free loopback ports, then the client subcommands
// (topic, produce, consume, cluster describe) against it, a consumer group that resumes after a
// restart, bad input and the exit codes of docs/cli.md, a node killed with SIGKILL in the
// middle of an acks=all produce, and the perf modes' counts.

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "runtime/client/consumer.hpp"
#include "runtime/client/producer.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/free_port.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

const std::string binary = CAPSTAN_BINARY;

// One `capstan node` on a data dir, restartable on the same ports.
class node_process {
public:
  explicit node_process(const temp_dir& dir)
      : dir_(dir), rpc_(free_port()), cluster_(free_port()), metrics_(free_port()) {}

  std::string bootstrap() const { return "127.0.0.1:" + std::to_string(rpc_); }
  std::string cluster_address() const { return "127.0.0.1:" + std::to_string(cluster_); }
  std::string metrics_address() const { return "127.0.0.1:" + std::to_string(metrics_); }

  void start() {
    ++starts_;
    child_ = std::make_unique<child_process>(
        binary,
        std::vector<std::string>{"node", "--data-dir", (dir_ / "data").string(), "--listen",
                                 bootstrap(), "--cluster-listen",
                                 "127.0.0.1:" + std::to_string(cluster_), "--metrics-listen",
                                 "127.0.0.1:" + std::to_string(metrics_), "--kafka-listen", ""},
        dir_.path(), "node" + std::to_string(starts_));
    const bool up = child_->wait_for_stderr("ready; stop with", 30s);
    INFO(child_->stderr_text());
    REQUIRE(up);
    // The listening line can precede the first metadata answer by a moment.
    for (int i = 0; i < 100; ++i) {
      if (run({"topic", "list"}) == 0) return;
      std::this_thread::sleep_for(100ms);
    }
    FAIL("node does not answer topic list");
  }

  void stop(int sig) {
    child_->signal(sig);
    REQUIRE(child_->wait(60s));
    child_.reset();
  }

  // Runs a client subcommand with --bootstrap appended.
  int run(std::vector<std::string> args, std::string* out = nullptr,
          std::string* err = nullptr) const {
    args.push_back("--bootstrap");
    args.push_back(bootstrap());
    return run_to_end(binary, args, dir_.path(), out, err, 60s);
  }

  // Runs `printf INPUT | capstan ARGS --bootstrap ...` through the shell.
  int run_with_input(const std::string& input, const std::string& args, std::string* out = nullptr,
                     std::string* err = nullptr) const {
    const auto in = dir_ / ("stdin" + std::to_string(++inputs_));
    {
      std::FILE* f = std::fopen(in.c_str(), "w");
      REQUIRE(f);
      std::fwrite(input.data(), 1, input.size(), f);
      std::fclose(f);
    }
    const std::string command =
        "'" + binary + "' " + args + " --bootstrap " + bootstrap() + " < '" + in.string() + "'";
    return run_to_end("/bin/sh", {"-c", command}, dir_.path(), out, err, 60s);
  }

private:
  const temp_dir& dir_;
  uint16_t rpc_, cluster_, metrics_;
  int starts_ = 0;
  mutable int inputs_ = 0;
  std::unique_ptr<child_process> child_;
};

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    auto nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    out.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

// The text without its trailing newline, when it is exactly one line.
std::optional<std::string> one_line(const std::string& text) {
  auto body = text;
  while (!body.empty() && body.back() == '\n') body.pop_back();
  if (body.empty() || body.find('\n') != std::string::npos) return std::nullopt;
  return body;
}

bytes_view as_bytes(const std::string& s) {
  return bytes_view(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

} // namespace

TEST_CASE("topic create, list, describe and delete through the CLI", "[system][cli]") {
  temp_dir dir("capstan-cli");
  node_process node(dir);
  node.start();
  std::string out, err;
  REQUIRE(node.run({"topic", "create", "orders", "--partitions", "3", "--replication-factor", "1",
                    "--config", "retention.ms=3600000"},
                   &out, &err) == 0);
  CHECK(out.find("Created topic orders") != std::string::npos);

  REQUIRE(node.run({"topic", "list"}, &out, &err) == 0);
  auto names = lines(out);
  CHECK(std::find(names.begin(), names.end(), "orders") != names.end());

  REQUIRE(node.run({"topic", "describe", "orders"}, &out, &err) == 0);
  CHECK(out.find("PartitionCount: 3") != std::string::npos);
  for (int p = 0; p < 3; ++p)
    CHECK(out.find("Partition: " + std::to_string(p) + "\tLeader: 1\tReplicas: 1\tIsr: 1") !=
          std::string::npos);
  // The override apart from the defaults the topic runs with.
  CHECK(out.find("\tConfigs: retention.ms=3600000\tDefaults: ") != std::string::npos);
  CHECK(out.find("cleanup.policy=delete") > out.find("\tDefaults: "));

  REQUIRE(node.run({"cluster", "describe"}, &out, &err) == 0);
  CHECK(out.find("Controller: 1") != std::string::npos);
  CHECK(out.find("orders-2\tLeader: 1") != std::string::npos);

  CHECK(node.run({"topic", "create", "orders", "--partitions", "1"}, &out, &err) != 0);
  CHECK(err.find("TOPIC_ALREADY_EXISTS") != std::string::npos);

  REQUIRE(node.run({"topic", "delete", "orders"}, &out, &err) == 0);
  REQUIRE(node.run({"topic", "list"}, &out, &err) == 0);
  names = lines(out);
  CHECK(std::find(names.begin(), names.end(), "orders") == names.end());
  node.stop(SIGTERM);
}

TEST_CASE(
    "lines produced through the CLI are consumed back in order, keyed ones on murmur2's partition",
    "[system][cli]") {
  temp_dir dir("capstan-cli");
  node_process node(dir);
  node.start();
  std::string out, err;
  REQUIRE(node.run({"topic", "create", "lines", "--partitions", "1"}, &out, &err) == 0);
  INFO(err);
  REQUIRE(node.run_with_input("one\ntwo\n", "produce lines --acks all", &out, &err) == 0);
  // Without idempotence (explicitly, and implied by acks 1) it writes as well.
  REQUIRE(node.run_with_input("three\n", "produce lines --idempotence false", &out, &err) == 0);
  REQUIRE(node.run_with_input("four\n", "produce lines --acks 1", &out, &err) == 0);
  REQUIRE(
      node.run({"consume", "lines", "--from-beginning", "--timeout-ms", "1000", "--print-offset"},
               &out, &err) == 0);
  CHECK(lines(out) == std::vector<std::string>{"0\tone", "1\ttwo", "2\tthree", "3\tfour"});

  REQUIRE(node.run({"consume", "lines", "--offset", "1", "--max-messages", "1"}, &out, &err) == 0);
  CHECK(lines(out) == std::vector<std::string>{"two"});

  REQUIRE(node.run({"topic", "create", "keyed", "--partitions", "4"}, &out, &err) == 0);
  REQUIRE(node.run_with_input("alpha:1\nbeta:2\nalpha:3\n", "produce keyed --key-separator :", &out,
                              &err) == 0);
  const int alpha = client::partition_for_key(as_bytes("alpha"), 4);
  const int beta = client::partition_for_key(as_bytes("beta"), 4);
  REQUIRE(node.run({"consume", "keyed", "--partition", std::to_string(alpha), "--from-beginning",
                    "--timeout-ms", "1000", "--print-key"},
                   &out, &err) == 0);
  auto alpha_lines = lines(out);
  if (alpha == beta) {
    CHECK(alpha_lines == std::vector<std::string>{"alpha\t1", "beta\t2", "alpha\t3"});
  } else {
    CHECK(alpha_lines == std::vector<std::string>{"alpha\t1", "alpha\t3"});
  }
  // Every partition, each record with its partition, offset and key.
  REQUIRE(node.run({"consume", "keyed", "--from-beginning", "--timeout-ms", "1000",
                    "--print-partition", "--print-offset", "--print-key"},
                   &out, &err) == 0);
  auto all = lines(out);
  std::sort(all.begin(), all.end());
  std::vector<std::string> expected{
      std::to_string(alpha) + "\t0\talpha\t1",
      std::to_string(alpha) + "\t" + (alpha == beta ? "2" : "1") + "\talpha\t3",
      std::to_string(beta) + "\t" + (alpha == beta ? "1" : "0") + "\tbeta\t2"};
  std::sort(expected.begin(), expected.end());
  CHECK(all == expected);
  node.stop(SIGTERM);
}

TEST_CASE("consume --group resumes from the committed offset after a restart", "[system][cli]") {
  temp_dir dir("capstan-cli");
  node_process node(dir);
  node.start();
  std::string out, err;
  REQUIRE(node.run({"topic", "create", "jobs", "--partitions", "1"}, &out, &err) == 0);
  REQUIRE(node.run_with_input("a\nb\nc\nd\ne\n", "produce jobs", &out, &err) == 0);
  REQUIRE(
      node.run({"consume", "jobs", "--group", "workers", "--from-beginning", "--max-messages", "3"},
               &out, &err) == 0);
  CHECK(lines(out) == std::vector<std::string>{"a", "b", "c"});

  node.stop(SIGTERM);
  node.start();
  const int rc =
      node.run({"consume", "jobs", "--group", "workers", "--timeout-ms", "1000"}, &out, &err);
  INFO(err);
  REQUIRE(rc == 0);
  CHECK(lines(out) == std::vector<std::string>{"d", "e"});
  // Everything is committed now: nothing more for the group.
  REQUIRE(node.run({"consume", "jobs", "--group", "workers", "--timeout-ms", "500"}, &out, &err) ==
          0);
  CHECK(out.empty());
  node.stop(SIGTERM);
}

TEST_CASE("groups list and describe show a group's commits, log ends, lag and state, and "
          "reset-offsets moves them only with --execute",
          "[system][cli][groups]") {
  temp_dir dir("capstan-cli");
  node_process node(dir);
  node.start();
  std::string out, err;
  REQUIRE(node.run({"topic", "create", "jobs", "--partitions", "1"}, &out, &err) == 0);
  REQUIRE(node.run_with_input("a\nb\nc\nd\ne\nf\n", "produce jobs", &out, &err) == 0);
  REQUIRE(node.run({"consume", "jobs", "--group", "w", "--from-beginning", "--max-messages", "4"},
                   &out, &err) == 0);
  REQUIRE(node.run({"groups", "describe", "w"}, &out, &err) == 0);
  CHECK(lines(out) ==
        std::vector<std::string>{"GROUP\tTOPIC\tPARTITION\tCURRENT-OFFSET\tLOG-END-OFFSET\tLAG\tCONSUMER-ID\tCLIENT-ID",
                                 "w\tjobs\t0\t4\t6\t2\t-\t-"});
  REQUIRE(node.run({"groups", "describe", "nobody"}, &out, &err) == 0);
  CHECK(out.find("has no committed offsets and no active members") != std::string::npos);
  REQUIRE(node.run({"groups", "list"}, &out, &err) == 0);
  CHECK(lines(out) == std::vector<std::string>{"w"});
  // The consumer left when it was done: a group of commits and no members.
  REQUIRE(node.run({"groups", "describe", "w", "--state"}, &out, &err) == 0);
  REQUIRE(lines(out).size() == 2);
  CHECK(lines(out)[1].rfind("w\tEmpty\t", 0) == 0);
  REQUIRE(node.run({"groups", "describe", "nobody", "--state", "--members"}, &out, &err) == 0);
  CHECK(lines(out) == std::vector<std::string>{"GROUP\tSTATE\tPROTOCOL\tGENERATION\tLEADER\tMEMBERS",
                                               "nobody\tDead\t-\t0\t-\t0",
                                               "GROUP\tMEMBER-ID\tGROUP-INSTANCE-ID\tCLIENT-ID\t#PARTITIONS\tASSIGNMENT"});

  // A dry run prints and changes nothing; --execute commits; a shift past the log is clamped.
  REQUIRE(node.run({"groups", "reset-offsets", "w", "--topic", "jobs", "--to-earliest"}, &out,
                   &err) == 0);
  CHECK(lines(out).back() == "w\tjobs\t0\t0");
  CHECK(err.find("Dry run") != std::string::npos);
  REQUIRE(node.run({"groups", "describe", "w"}, &out, &err) == 0);
  CHECK(lines(out).back() == "w\tjobs\t0\t4\t6\t2\t-\t-");
  REQUIRE(
      node.run({"groups", "reset-offsets", "w", "--topic", "jobs", "--shift-by", "-3", "--execute"},
               &out, &err) == 0);
  REQUIRE(node.run({"consume", "jobs", "--group", "w", "--max-messages", "2"}, &out, &err) == 0);
  CHECK(lines(out) == std::vector<std::string>{"b", "c"});
  REQUIRE(node.run(
              {"groups", "reset-offsets", "w", "--topic", "jobs", "--shift-by", "100", "--execute"},
              &out, &err) == 0);
  CHECK(err.find("outside the log") != std::string::npos);
  REQUIRE(node.run({"groups", "describe", "w"}, &out, &err) == 0);
  CHECK(lines(out).back() == "w\tjobs\t0\t6\t6\t0\t-\t-");
  // By time: the first record at or after it, or the log end when none is.
  REQUIRE(node.run({"groups", "reset-offsets", "w", "--topic", "jobs", "--to-datetime",
                    "2000-01-01T00:00:00Z", "--execute"},
                   &out, &err) == 0);
  CHECK(lines(out).back() == "w\tjobs\t0\t0");
  REQUIRE(node.run({"groups", "reset-offsets", "w", "--topic", "jobs", "--to-datetime",
                    "2100-01-01T00:00:00+01:00"},
                   &out, &err) == 0);
  CHECK(lines(out).back() == "w\tjobs\t0\t6");
  CHECK(node.run({"groups", "reset-offsets", "w", "--topic", "jobs", "--to-datetime", "yesterday"},
                 &out, &err) == 2);
  CHECK(err.find("YYYY-MM-DDTHH:mm:SS") != std::string::npos);

  // Deleting the group takes its commits; a second delete finds nothing.
  REQUIRE(node.run({"groups", "delete", "w"}, &out, &err) == 0);
  CHECK(out.find("('w') was successful") != std::string::npos);
  REQUIRE(node.run({"groups", "list"}, &out, &err) == 0);
  CHECK(out.empty());
  CHECK(node.run({"groups", "delete", "w"}, &out, &err) == 1);
  CHECK(err.find("GROUP_ID_NOT_FOUND") != std::string::npos);

  // Bad command lines: no mode, two modes, an unknown topic.
  CHECK(node.run({"groups", "reset-offsets", "w", "--topic", "jobs"}, &out, &err) == 2);
  CHECK(
      node.run({"groups", "reset-offsets", "w", "--topic", "jobs", "--to-earliest", "--to-latest"},
               &out, &err) == 2);
  CHECK(node.run({"groups", "reset-offsets", "w", "--topic", "nope", "--to-earliest"}, &out,
                 &err) != 0);
  CHECK(err.find("UNKNOWN_TOPIC_OR_PARTITION") != std::string::npos);
  node.stop(SIGTERM);
}

TEST_CASE("bad CLI input exits non-zero with a clear message", "[system][cli]") {
  temp_dir dir("capstan-cli");
  node_process node(dir);
  node.start();
  std::string out, err;
  CHECK(node.run({"topic", "create", "bad/name"}, &out, &err) != 0);
  CHECK(err.find("INVALID_TOPIC_EXCEPTION") != std::string::npos);
  CHECK(node.run({"topic", "create", std::string(250, 'x')}, &out, &err) != 0);
  CHECK(err.find("INVALID_TOPIC_EXCEPTION") != std::string::npos);

  CHECK(node.run_with_input("x\n", "produce missing", &out, &err) != 0);
  CHECK(err.find("UNKNOWN_TOPIC_OR_PARTITION") != std::string::npos);
  CHECK(node.run({"consume", "missing", "--timeout-ms", "100"}, &out, &err) != 0);
  CHECK(err.find("UNKNOWN_TOPIC_OR_PARTITION") != std::string::npos);
  CHECK(node.run({"topic", "describe", "missing"}, &out, &err) != 0);
  CHECK(err.find("UNKNOWN_TOPIC_OR_PARTITION") != std::string::npos);

  REQUIRE(node.run({"topic", "create", "small", "--partitions", "2"}, &out, &err) == 0);
  CHECK(node.run({"consume", "small", "--partition", "7", "--timeout-ms", "100"}, &out, &err) != 0);
  CHECK(err.find("UNKNOWN_TOPIC_OR_PARTITION") != std::string::npos);
  CHECK(node.run_with_input("x\n", "produce small --acks 2", &out, &err) != 0);
  CHECK(err.find("--acks") != std::string::npos);
  CHECK(node.run_with_input("no separator\n", "produce small --key-separator :", &out, &err) != 0);
  CHECK(err.find("key separator") != std::string::npos);

  CHECK(run_to_end(binary, {"topic", "list", "--bootstrap", "127.0.0.1:1"}, dir.path(), &out, &err,
                   30s) != 0);
  CHECK(err.find("NETWORK_EXCEPTION") != std::string::npos);
  CHECK(run_to_end(binary, {"topic", "list", "--bootstrap", "nonsense"}, dir.path(), &out, &err,
                   30s) != 0);
  CHECK(err.find("HOST:PORT") != std::string::npos);
  node.stop(SIGTERM);
}

TEST_CASE("every record acknowledged with acks=all survives a kill -9 of the node mid-produce",
          "[system][cli][crash]") {
  temp_dir dir("capstan-cli");
  node_process node(dir);
  node.start();
  std::string out, err;
  REQUIRE(node.run({"topic", "create", "durable", "--partitions", "2"}, &out, &err) == 0);

  client::client_config config;
  config.bootstrap = {node.bootstrap()};
  config.acks = -1;
  config.linger_ms = 1;
  config.batch_size = 2048;
  config.request_timeout_ms = 2000;
  config.delivery_timeout_ms = 3000;
  config.retry_backoff_ms = 50;
  // A small backlog: what is queued when the node dies fails within delivery.timeout.ms.
  config.buffer_memory = 1 << 20;

  std::mutex mu;
  std::map<std::pair<int32_t, int64_t>, std::string> acknowledged;
  std::atomic<uint64_t> acked{0};
  std::atomic<bool> stop{false};
  {
    auto connected = client::cluster_client::connect(config);
    REQUIRE(connected);
    auto& cc = **connected;
    std::thread writer([&] {
      client::producer producer(cc, config);
      for (int i = 0; !stop && i < 2000000; ++i) {
        auto value = std::make_shared<std::string>("record-" + std::to_string(i));
        producer.send("durable", std::nullopt, as_bytes(*value), std::nullopt,
                      [&, value](result<client::record_metadata> r) {
                        if (!r) return;
                        std::lock_guard lock(mu);
                        acknowledged[{r->partition, r->off.value()}] = *value;
                        ++acked;
                      });
      }
      producer.flush();
    });
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (acked < 20000 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(10ms);
    node.stop(SIGKILL);
    stop = true;
    writer.join();
  }
  const auto acked_before_kill = acked.load();
  REQUIRE(acked_before_kill > 0);

  node.start();
  auto connected = client::cluster_client::connect(config);
  REQUIRE(connected);
  client::consumer consumer(**connected, config);
  REQUIRE(consumer.assign("durable"));
  REQUIRE(consumer.seek_to_beginning());
  std::map<std::pair<int32_t, int64_t>, std::string> stored;
  for (;;) {
    auto n = consumer.poll_each(1000ms, [&](const client::record_ref& r) {
      stored[{r.tp.partition, r.off.value()}] = std::string(
          reinterpret_cast<const char*>(r.record.value->data()), r.record.value->size());
    });
    REQUIRE(n);
    if (*n == 0) break;
  }
  std::lock_guard lock(mu);
  INFO("acknowledged " << acknowledged.size() << ", stored " << stored.size());
  size_t missing = 0;
  for (const auto& [where, value] : acknowledged) {
    auto it = stored.find(where);
    if (it == stored.end() || it->second != value) ++missing;
  }
  CHECK(missing == 0);
  CHECK(stored.size() >= acknowledged.size());
  node.stop(SIGTERM);
}

TEST_CASE("a bad command line exits 2 with one error line naming the argument", "[system][cli]") {
  temp_dir dir("capstan-cli");
  std::filesystem::create_directories(dir / "empty");
  {
    std::ofstream(dir / "typed.toml") << "log.dirs = 5\n";
    std::ofstream(dir / "aliases.toml") << "node.id = 1\nbroker.id = 2\n";
  }
  struct row {
    std::vector<std::string> args;
    std::string says; // a piece of the one stderr line
  };
  const std::vector<row> rows = {
      {{"node", "--bogus-flag"}, "--bogus-flag"},
      {{"topic", "create", "t", "--partitions", "0"},
       "--partitions: 0 is not an integer in 1..10000"},
      {{"node", "--node-id", "-1"}, "--node-id: -1 is not an integer in 0..2147483647"},
      {{"node", "--config", (dir / "missing.toml").string()}, "--config"},
      {{}, "capstan needs a subcommand, one of: node, topic"},
      {{"topic"},
       "capstan topic needs a subcommand, one of: create, list, describe, alter-config, "
       "add-partitions, delete, reassign"},
      {{"bogus"}, "'bogus' is not a subcommand of capstan; it takes one of: node, topic"},
      {{"topic", "bogus"}, "'bogus' is not a subcommand of capstan topic"},
      {{"consume", "t", "--offset", "5", "--from-beginning"}, "--from-beginning excludes --offset"},
      {{"node", "--listen", "127.0.0.1:70000"}, "--listen: '127.0.0.1:70000' is not HOST:PORT"},
      {{"consume", "t", "--max-messages", "0"}, "--max-messages: 0 is not an integer >= 1"},
      {{"consume", "t", "--offset", "99999999999999999999"},
       "--offset: 99999999999999999999 is not an integer >= 0"},
      {{"consume", "t", "--timeout-ms", "soon"}, "--timeout-ms: 'soon' is not an integer >= 0"},
      {{"produce", "t", "--key-separator", ""}, "--key-separator: an empty value is not allowed"},
      {{"produce", "t", "--acks", "1", "--idempotence", "true"},
       "--idempotence: idempotence requires acks all, not acks 1"},
      {{"produce", "t", "--idempotence", "maybe"}, "--idempotence"},
      {{"perf", "produce", "t", "--records", "1", "--max-in-flight", "6", "--idempotence", "true"},
       "at most 5 requests in flight per partition, not 6"},
      {{"perf", "produce", "t", "--records", "1", "--sync", "--throughput", "10"},
       "--throughput excludes --sync"},
      {{"perf", "e2e", "t", "--records", "10", "--record-size", "8"},
       "--record-size: 8 is not an integer in 16.."},
      {{"perf", "e2e", "t", "--records", "10", "--throughput", "0"},
       "--throughput: 0 is not an integer in 1.."},
      {{"perf", "e2e", "t"}, "--records"},
      {{"log", "dump", (dir / "empty").string()}, "holds no .log segment files"},
      {{"node", "--config", (dir / "typed.toml").string()},
       "log.dirs: must be a string (a directory), not an integer (5)"},
      {{"node", "--config", (dir / "aliases.toml").string()}, "node.id = 1 and broker.id = 2"},
  };
  for (const auto& r : rows) {
    std::string joined;
    for (const auto& a : r.args) joined += a + " ";
    INFO("capstan " << joined);
    std::string out, err;
    // A command line that were accepted would start a node: the bound ends it.
    const int code = run_to_end(binary, r.args, dir.path(), &out, &err, 30s);
    INFO("stderr: " << err);
    CHECK(code == 2);
    auto line = one_line(err);
    REQUIRE(line);
    CHECK(line->find(r.says) != std::string::npos);
    CHECK(line->size() < 300);
  }
  CHECK_FALSE(std::filesystem::exists(dir / "5"));

  std::string out, err;
  CHECK(run_to_end(binary, {"--help"}, dir.path(), &out, &err, 30s) == 0);
  CHECK(out.find("Subcommands:") != std::string::npos);
  CHECK(run_to_end(binary, {"consume", "--help"}, dir.path(), &out, &err, 30s) == 0);
  CHECK(out.find("--timeout-ms") != std::string::npos);
  CHECK(run_to_end(binary, {"perf", "produce", "--help"}, dir.path(), &out, &err, 30s) == 0);
  CHECK(out.find("--sync") != std::string::npos);
  CHECK(run_to_end(binary, {"perf", "e2e", "--help"}, dir.path(), &out, &err, 30s) == 0);
  CHECK(out.find("--throughput") != std::string::npos);
  CHECK(run_to_end(binary, {"debug", "fault", "isolate", "--help"}, dir.path(), &out, &err, 30s) ==
        0);
  CHECK(out.find("--peers") != std::string::npos);
  CHECK(out.find("--bootstrap") != std::string::npos);
}

TEST_CASE("failures against a running node exit 1, invalid requests 2, each with one error line",
          "[system][cli]") {
  temp_dir dir("capstan-cli");
  node_process node(dir);
  node.start();
  std::string out, err;
  REQUIRE(node.run({"topic", "create", "orders"}, &out, &err) == 0);
  CHECK(node.run({"topic", "create", "orders"}, &out, &err) == 1);
  CHECK(one_line(err));
  CHECK(err.find("TOPIC_ALREADY_EXISTS") != std::string::npos);
  CHECK(node.run({"topic", "describe", "missing"}, &out, &err) == 1);
  CHECK(one_line(err));
  CHECK(node.run({"topic", "create", "bad/name"}, &out, &err) == 2);
  CHECK(one_line(err));
  CHECK(err.find("INVALID_TOPIC_EXCEPTION") != std::string::npos);
  CHECK(node.run({"topic", "create", "cfg", "--config", "retention.ms=soon"}, &out, &err) == 2);
  CHECK(err.find("INVALID_CONFIG") != std::string::npos);
  // A single node has nowhere to move replicas to.
  CHECK(node.run({"topic", "reassign", "orders", "--replicas", "2"}, &out, &err) == 1);
  CHECK(one_line(err));
  CHECK(
      out.find("INVALID_REPLICA_ASSIGNMENT: replicas [2] for orders-0: node 2 is not registered") !=
      std::string::npos);
  CHECK(run_to_end(binary, {"topic", "list", "--bootstrap", "127.0.0.1:1"}, dir.path(), &out, &err,
                   30s) == 1);
  CHECK(one_line(err));
  CHECK(err.find("NETWORK_EXCEPTION") != std::string::npos);
  node.stop(SIGTERM);
}

TEST_CASE(
    "pointing the CLI at the cluster or metrics port says it is not a client port, without waiting",
    "[system][cli]") {
  temp_dir dir("capstan-cli");
  node_process node(dir);
  node.start();
  for (const auto& address : {node.cluster_address(), node.metrics_address()}) {
    INFO(address);
    std::string out, err;
    // The metrics port's HTTP server gives up on a request after 10 s: the answer must come first.
    const int code =
        run_to_end(binary, {"topic", "list", "--bootstrap", address}, dir.path(), &out, &err, 8s);
    INFO("stderr: " << err);
    CHECK(code == 1);
    auto line = one_line(err);
    REQUIRE(line);
    CHECK(line->find("NETWORK_EXCEPTION: " + address + " is not a capstan client port") !=
          std::string::npos);
  }
  node.stop(SIGTERM);
}

TEST_CASE("a listener that cannot be opened because its port is taken is named", "[system][cli]") {
  temp_dir dir("capstan-cli");
  node_process node(dir);
  node.start();
  struct row {
    std::string flag;
    std::string taken;
    std::string says;
  };
  const std::vector<row> rows = {
      {"--listen", node.bootstrap(), "client listener " + node.bootstrap() + " is in use"},
      {"--cluster-listen", node.cluster_address(),
       "cluster listener " + node.cluster_address() + " is in use"},
      {"--metrics-listen", node.metrics_address(),
       "metrics listener " + node.metrics_address() + " is in use"},
  };
  int i = 0;
  for (const auto& r : rows) {
    INFO(r.flag);
    std::map<std::string, std::string> flags = {{"--listen", "127.0.0.1:0"},
                                                {"--cluster-listen", "127.0.0.1:0"},
                                                {"--metrics-listen", "127.0.0.1:0"},
                                                {"--kafka-listen", ""}};
    flags[r.flag] = r.taken;
    std::vector<std::string> args = {"node", "--data-dir",
                                     (dir / ("other" + std::to_string(++i))).string()};
    for (const auto& [flag, value] : flags) {
      args.push_back(flag);
      args.push_back(value);
    }
    std::string out, err;
    const int code = run_to_end(binary, args, dir.path(), &out, &err, 60s);
    INFO("stderr: " << err);
    CHECK(code == 1);
    CHECK(err.find(r.says) != std::string::npos);
  }
  node.stop(SIGTERM);
}

TEST_CASE("consume --timeout-ms bounds the wait while the topic is deleted under it",
          "[system][cli]") {
  temp_dir dir("capstan-cli");
  node_process node(dir);
  node.start();
  std::string out, err;
  REQUIRE(node.run({"topic", "create", "doomed"}, &out, &err) == 0);
  REQUIRE(node.run_with_input("first\n", "produce doomed", &out, &err) == 0);
  // request.timeout.ms far above --timeout-ms: before the fix the consumer waited for it.
  child_process consumer(binary,
                         {"consume", "doomed", "--from-beginning", "--timeout-ms", "10000",
                          "--request-timeout-ms", "120000", "--bootstrap", node.bootstrap()},
                         dir.path(), "consumer");
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (consumer.stdout_text().find("first") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(50ms);
  REQUIRE(consumer.stdout_text().find("first") != std::string::npos);
  REQUIRE(node.run({"topic", "delete", "doomed"}, &out, &err) == 0);
  const auto code = consumer.wait(40s);
  INFO("stderr: " << consumer.stderr_text());
  REQUIRE(code);
  CHECK(*code == 1);
  CHECK(consumer.stderr_text().find("error: UNKNOWN_TOPIC_OR_PARTITION") != std::string::npos);
  node.stop(SIGTERM);
}

TEST_CASE("user topics named __... are ordinary, names colliding over '.' and '_' are refused",
          "[system][cli]") {
  temp_dir dir("capstan-cli");
  node_process node(dir);
  node.start();
  std::string out, err;
  REQUIRE(node.run({"topic", "create", "__internal"}, &out, &err) == 0);
  CHECK(node.run({"topic", "delete", "__internal"}, &out, &err) == 0);
  // The node keeps its own (node-local) offsets topic; the controller knows no such topic.
  CHECK(node.run({"topic", "delete", "__consumer_offsets"}, &out, &err) == 1);
  CHECK(err.find("UNKNOWN_TOPIC_OR_PARTITION") != std::string::npos);

  REQUIRE(node.run({"topic", "create", "a_b"}, &out, &err) == 0);
  CHECK(node.run({"topic", "create", "a.b"}, &out, &err) == 2);
  CHECK(err.find("INVALID_TOPIC_EXCEPTION: Topic 'a.b' collides with existing topic: a_b") !=
        std::string::npos);
  node.stop(SIGTERM);
}

namespace {

// The figures of a perf summary line (the text up to the first ' ' is the record count, each
// "N us NAME" gives a latency).
struct perf_line {
  unsigned long long records = 0;
  long long max = -1, p50 = -1, p99 = -1, p999 = -1;
};

std::optional<perf_line> parse_perf_line(const std::string& text, const std::string& what) {
  for (const auto& l : lines(text)) {
    if (l.find(what) == std::string::npos) continue;
    perf_line p;
    if (std::sscanf(l.c_str(), "%llu", &p.records) != 1) return std::nullopt;
    const auto at = l.find("us max latency, ");
    if (at == std::string::npos) return std::nullopt;
    const auto from = l.rfind(", ", at);
    if (from == std::string::npos ||
        std::sscanf(l.c_str() + from + 2,
                    "%lld us max latency, %lld us 50th, %lld us 99th, %lld us 99.9th.", &p.max,
                    &p.p50, &p.p99, &p.p999) != 4)
      return std::nullopt;
    return p;
  }
  return std::nullopt;
}

} // namespace

TEST_CASE("perf produce --keys --producers sends every record, each key always to one partition",
          "[system][cli][perf]") {
  temp_dir dir("capstan-cli");
  node_process node(dir);
  node.start();
  std::string out, err;
  REQUIRE(node.run({"topic", "create", "keyed", "--partitions", "4"}, &out, &err) == 0);
  // --throughput 0 is unlimited, for each producer too.
  REQUIRE(node.run({"perf", "produce", "keyed", "--records", "300", "--keys", "30", "--producers", "3",
                    "--record-size", "10", "--throughput", "0"},
                   &out, &err) == 0);
  INFO("stdout: " << out << "stderr: " << err);
  CHECK(out.find("300 records sent,") != std::string::npos);

  REQUIRE(node.run({"consume", "keyed", "--from-beginning", "--max-messages", "300", "--print-partition",
                    "--print-key", "--timeout-ms", "10000"},
                   &out, &err) == 0);
  std::map<std::string, std::set<int>> partitions_of_key;
  std::istringstream in(out);
  std::string line;
  size_t records = 0;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    int partition = -1;
    std::string key;
    if (!(fields >> partition >> key)) continue;
    ++records;
    partitions_of_key[key].insert(partition);
  }
  CHECK(records == 300);
  CHECK(partitions_of_key.size() == 30);
  std::set<int> used;
  for (const auto& [key, ps] : partitions_of_key) {
    INFO("key " << key);
    CHECK(ps.size() == 1);
    used.insert(ps.begin(), ps.end());
  }
  CHECK(used.size() > 1);

  CHECK(node.run({"perf", "produce", "keyed", "--records", "1", "--sync", "--keys", "3"}, &out, &err) == 2);
}

TEST_CASE("perf produce --sync and perf e2e account for every record they send",
          "[system][cli][perf]") {
  temp_dir dir("capstan-cli");
  node_process node(dir);
  node.start();
  std::string out, err;
  REQUIRE(node.run({"topic", "create", "lat", "--partitions", "2"}, &out, &err) == 0);

  REQUIRE(node.run({"perf", "produce", "lat", "--records", "40", "--sync", "--acks", "all"}, &out,
                   &err) == 0);
  INFO("stdout: " << out << "stderr: " << err);
  auto sync = parse_perf_line(out, "records sent one at a time");
  REQUIRE(sync);
  CHECK(sync->records == 40);
  CHECK(sync->p50 <= sync->p99);
  CHECK(sync->p99 <= sync->p999);
  CHECK(sync->p999 <= sync->max);

  // Only the records this run writes count: the 40 above are skipped.
  REQUIRE(node.run({"perf", "e2e", "lat", "--records", "300", "--throughput", "1000",
                    "--record-size", "32", "--acks", "all", "--timeout-ms", "20000"},
                   &out, &err) == 0);
  auto e2e = parse_perf_line(out, "records received end to end");
  REQUIRE(e2e);
  CHECK(e2e->records == 300);
  CHECK(e2e->p50 <= e2e->p99);
  CHECK(e2e->p99 <= e2e->p999);
  CHECK(e2e->p999 <= e2e->max);
  CHECK(err.empty());

  // Warm-up records are sent (and consumed) but left out of the figures.
  REQUIRE(node.run({"perf", "produce", "lat", "--records", "20", "--sync", "--warmup-records", "5"},
                   &out, &err) == 0);
  sync = parse_perf_line(out, "records sent one at a time");
  REQUIRE(sync);
  CHECK(sync->records == 20);
  REQUIRE(node.run({"perf", "e2e", "lat", "--records", "100", "--warmup-records", "50",
                    "--throughput", "1000", "--timeout-ms", "20000"},
                   &out, &err) == 0);
  CHECK(out.find("(after 50 warm-up)") != std::string::npos);
  e2e = parse_perf_line(out, "records received end to end");
  REQUIRE(e2e);
  CHECK(e2e->records == 100);
  CHECK(node.run({"perf", "produce", "lat", "--records", "20", "--warmup-records", "5"}, &out,
                 &err) != 0);
  CHECK(err.find("--warmup-records requires --sync") != std::string::npos);

  REQUIRE(node.run({"perf", "consume", "lat", "--records", "515", "--timeout-ms", "5000"}, &out,
                   &err) == 0);
  CHECK(out.find("515 records received") == 0);

  CHECK(node.run({"perf", "e2e", "missing", "--records", "10"}, &out, &err) == 1);
  CHECK(one_line(err));
  CHECK(err.find("UNKNOWN_TOPIC_OR_PARTITION") != std::string::npos);
  CHECK(node.run({"perf", "produce", "missing", "--records", "10", "--sync"}, &out, &err) == 1);
  CHECK(err.find("UNKNOWN_TOPIC_OR_PARTITION") != std::string::npos);
  node.stop(SIGTERM);
}
