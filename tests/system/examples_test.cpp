// Every example under examples/ run as a user would: the scripts through bash with their
// environment variables (free ports on 127.0.0.1, a temp EXAMPLE_DIR, this build's binary), the
// C++ client example against a real node. Each asserts the exit code and the output a user reads,
// and that no node a script started outlives its stop.

#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <sys/types.h>

#include "tests/support/child_process.hpp"
#include "tests/support/free_port.hpp"
#include "tests/support/node_process.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

const std::string binary = CAPSTAN_BINARY;
const std::string examples = CAPSTAN_EXAMPLES_DIR;

// Alive and not a zombie: a node whose parent script has exited waits for init to reap it.
bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const auto close = line.rfind(')');
  return close != std::string::npos && line.size() > close + 2 && line[close + 2] != 'Z';
}

std::string join(const std::vector<uint16_t>& ports) {
  std::string out;
  for (auto p : ports) out += (out.empty() ? "" : ",") + std::to_string(p);
  return out;
}

// An EXAMPLE_DIR and the variables that put an example's nodes on free ports of 127.0.0.1.
// Whatever a failed test leaves running is killed by the pids in EXAMPLE_DIR.
class example_run {
public:
  explicit example_run(int nodes) {
    std::set<uint16_t> taken;
    std::vector<uint16_t> lists[4];
    for (auto& list : lists)
      while (list.size() < static_cast<size_t>(nodes)) {
        const auto port = free_port();
        if (taken.insert(port).second) list.push_back(port);
      }
    env_ = "CAPSTAN='" + binary + "' EXAMPLE_DIR='" + example_dir().string() +
           "' CLIENT_PORTS=" + join(lists[0]) + " CLUSTER_PORTS=" + join(lists[1]) +
           " METRICS_PORTS=" + join(lists[2]) + " KAFKA_PORTS=" + join(lists[3]);
  }
  example_run(const example_run&) = delete;
  example_run& operator=(const example_run&) = delete;
  ~example_run() {
    for (pid_t pid : pids_in_dir())
      if (alive(pid)) ::kill(pid, SIGKILL);
  }

  std::filesystem::path example_dir() const { return dir_ / "example"; }

  // Runs examples/SCRIPT with the example's variables, `more` of them (NAME=VALUE ...) and
  // `args`, bounded by `timeout`.
  int run(const std::string& script, const std::string& more, std::string* out, std::string* err,
          std::chrono::milliseconds timeout = 120s, const std::string& args = "") {
    return run_to_end(
        "/bin/sh",
        {"-c", env_ + " " + more + " exec bash '" + examples + "/" + script + "' " + args},
        dir_.path(), out, err, timeout);
  }

  // The client addresses ("bootstrap") or the Kafka listeners' ("kafka-bootstrap") the start
  // script wrote, comma-separated.
  std::string bootstrap(const char* file = "bootstrap") const {
    std::ifstream in(example_dir() / file);
    std::string line;
    std::getline(in, line);
    return line;
  }

  int cli(const std::string& input, std::vector<std::string> args, std::string* out) {
    args.push_back("--bootstrap");
    args.push_back(bootstrap());
    std::string err;
    const int code = run_cli(binary, dir_, input, args, out, &err);
    UNSCOPED_INFO(err);
    return code;
  }

private:
  std::vector<pid_t> pids_in_dir() const {
    std::vector<pid_t> pids;
    if (!std::filesystem::is_directory(example_dir())) return pids;
    for (const auto& f : std::filesystem::directory_iterator(example_dir()))
      if (f.path().extension() == ".pid") {
        std::ifstream in(f.path());
        pid_t pid = 0;
        if (in >> pid && pid > 0) pids.push_back(pid);
      }
    return pids;
  }

  temp_dir dir_{"capstan-examples"};
  std::string env_;
};

// The pids a script printed as "node N (...): pid P", in order.
std::vector<pid_t> printed_pids(const std::string& out) {
  static const std::regex node(R"(node \d+ \([a-z ]+\): pid (\d+))");
  std::vector<pid_t> pids;
  for (std::sregex_iterator it(out.begin(), out.end(), node), end; it != end; ++it)
    pids.push_back(std::stoi((*it)[1]));
  return pids;
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

} // namespace

TEST_CASE("the three-node example starts a cluster with a replicated topic that the CLI produces "
          "to and consumes from, refuses a second start, and stop.sh ends every node it started",
          "[system][examples]") {
  example_run ex(3);
  std::string out, err;
  REQUIRE(ex.run("three-node/start.sh", "", &out, &err) == 0);
  INFO(out << err);
  CHECK(out.find("Cluster 'capstan-example-3node' is up") != std::string::npos);
  CHECK(out.find("controller quorum 1@127.0.0.1:") != std::string::npos);
  CHECK(std::regex_search(out, std::regex(R"(Partition: 0\tLeader: [123]\t.*Isr: \d,\d,\d)")));
  CHECK(out.find("min.insync.replicas=2") != std::string::npos);
  const auto pids = printed_pids(out);
  REQUIRE(pids.size() == 3);
  for (auto pid : pids) CHECK(alive(pid));

  REQUIRE(ex.cli("one\ntwo\nthree\n", {"produce", "example", "--acks", "all"}, &out) == 0);
  REQUIRE(ex.cli("", {"consume", "example", "--from-beginning", "--max-messages", "3"}, &out) == 0);
  CHECK(lines_of(out) == std::vector<std::string>{"one", "two", "three"});

  // Every node has its Kafka listener: kcat, following Metadata to the partition leader's,
  // produces what the CLI then reads.
  INFO("/usr/bin/kcat (Debian package kcat) is missing: run scripts/setup.sh");
  REQUIRE(std::filesystem::exists("/usr/bin/kcat"));
  REQUIRE(run_to_end("/bin/sh",
                     {"-c", "printf 'four\\n' | exec /usr/bin/kcat -P -t example -X acks=all -b " +
                                ex.bootstrap("kafka-bootstrap")},
                     ex.example_dir(), &out, &err) == 0);
  REQUIRE(ex.cli("", {"consume", "example", "--from-beginning", "--max-messages", "4"}, &out) == 0);
  CHECK(lines_of(out) == std::vector<std::string>{"one", "two", "three", "four"});

  CHECK(ex.run("three-node/start.sh", "", &out, &err) == 1);
  CHECK(err.find("running already") != std::string::npos);

  REQUIRE(ex.run("three-node/stop.sh", "", &out, &err) == 0);
  CHECK(count_of(out, ": stopped") == 3);
  for (auto pid : pids) CHECK_FALSE(alive(pid));
  CHECK_FALSE(std::filesystem::exists(ex.example_dir() / "node-1.pid"));
}

TEST_CASE("every example script explains itself on -h and refuses an unknown argument",
          "[system][examples]") {
  example_run ex(3);
  std::string out, err;
  for (const std::string script :
       {"three-node/start.sh", "three-node/stop.sh", "five-node/start.sh", "five-node/stop.sh",
        "failover-demo/run.sh"}) {
    INFO(script << ": " << out << err);
    CHECK(ex.run(script, "", &out, &err, 10s, "-h") == 0);
    CHECK(out.find("Usage: ") != std::string::npos);
    CHECK(ex.run(script, "", &out, &err, 10s, "bogus") == 2);
    CHECK(err.find("Usage: ") != std::string::npos);
  }
  CHECK(ex.run("three-node/start.sh", "CAPSTAN=/nonexistent", &out, &err, 10s) == 1);
  CHECK(err.find("no capstan binary at '/nonexistent'") != std::string::npos);
}

TEST_CASE("the five-node example starts three voters and two broker-only nodes with a replicated "
          "topic, and stop.sh ends all five, whose data dirs the three-node example refuses",
          "[system][examples]") {
  example_run ex(5);
  std::string out, err;
  REQUIRE(ex.run("five-node/start.sh", "", &out, &err) == 0);
  INFO(out << err);
  CHECK(out.find("5 nodes, controller quorum 1@127.0.0.1:") != std::string::npos);
  CHECK(count_of(out, "(voter and broker)") == 3);
  CHECK(count_of(out, "(broker)") == 2);
  CHECK(count_of(out, "Isr: ") == 3);
  const auto pids = printed_pids(out);
  REQUIRE(pids.size() == 5);

  REQUIRE(ex.run("five-node/stop.sh", "", &out, &err) == 0);
  CHECK(count_of(out, ": stopped") == 5);
  for (auto pid : pids) CHECK_FALSE(alive(pid));

  // The three-node example on the same EXAMPLE_DIR is another cluster: its node 1 refuses the
  // data dir and the script stops the nodes it started.
  std::set<uint16_t> taken;
  std::string ports;
  for (const char* list : {"CLIENT_PORTS", "CLUSTER_PORTS", "METRICS_PORTS", "KAFKA_PORTS"}) {
    std::vector<uint16_t> three;
    while (three.size() < 3)
      if (const auto port = free_port(); taken.insert(port).second) three.push_back(port);
    ports += std::string(" ") + list + "=" + join(three);
  }
  CHECK(ex.run("three-node/start.sh", ports, &out, &err) == 1);
  CHECK(err.find("belongs to cluster capstan-example-5node, not cluster capstan-example-3node") !=
        std::string::npos);
}

TEST_CASE("the failover demo kills the partition leader under acks=all load and reads back every "
          "acknowledged record, then stops its cluster",
          "[system][examples]") {
  example_run ex(3);
  std::string out, err;
  const int code =
      ex.run("failover-demo/run.sh", "RECORDS_BEFORE=100 RECORDS_AFTER=100", &out, &err, 240s);
  INFO(out << err);
  REQUIRE(code == 0);
  CHECK(out.find("kill -9") != std::string::npos);
  CHECK(out.find("new leader elected") != std::string::npos);
  // At least RECORDS_BEFORE + RECORDS_AFTER acknowledged, and all of them read back.
  const std::regex tally(R"(acknowledged: ([2-9]\d\d|\d{4,}), read: \d+ \(\d+ distinct\), )"
                         R"(missing: 0, offset gaps: 0)");
  CHECK(std::regex_search(out, tally));
  CHECK(out.find("every acknowledged record was read back, at offsets without a gap") !=
        std::string::npos);
  CHECK(count_of(out, ": stopped") == 2);
  const auto pids = printed_pids(out);
  REQUIRE(pids.size() == 3);
  for (auto pid : pids) CHECK_FALSE(alive(pid));
}

TEST_CASE("the C++ client example produces with acks=all and reads every record back, and "
          "fails with an error on a bad option or an unknown topic",
          "[system][examples]") {
  temp_dir dir("capstan-client-example");
  node_process node(dir, 1, node_process_options{binary, "", "127.0.0.1:0", {}});
  node.start();
  std::string out, err;
  REQUIRE(run_cli(binary, dir, "", {"topic", "create", "example", "--bootstrap", node.bootstrap()},
                  &out, &err) == 0);
  const int code =
      run_to_end(CAPSTAN_CLIENT_EXAMPLE,
                 {"--bootstrap", node.bootstrap(), "--topic", "example", "--records", "5"},
                 dir.path(), &out, &err, 60s);
  INFO(out << err);
  REQUIRE(code == 0);
  CHECK(out.find("produced 5 records to example with acks=all") != std::string::npos);
  for (int i = 1; i <= 5; ++i)
    CHECK(out.find(": record " + std::to_string(i) + " of 5\n") != std::string::npos);
  CHECK(out.find("read back all 5 records") != std::string::npos);

  CHECK(run_to_end(CAPSTAN_CLIENT_EXAMPLE, {"--records", "0"}, dir.path(), &out, &err) == 2);
  CHECK(run_to_end(CAPSTAN_CLIENT_EXAMPLE, {"--bootstrap", node.bootstrap(), "--topic", "absent"},
                   dir.path(), &out, &err) == 1);
  CHECK(err.find("UNKNOWN_TOPIC_OR_PARTITION") != std::string::npos);
  node.stop();
}
