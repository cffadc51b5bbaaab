// Replication between real `capstan node` processes whose controller the test binary plays
// (tests/support/test_controller). Each node is a broker of a quorum whose only voter (node 99)
// never runs, so no controller of its own competes with the test's. The test connects to each node's
// published node endpoint, sends UpdateMetadata and LeaderAndIsr, answers the leaders'
// AlterPartition, and elects a new leader from the committed ISR when one dies. The first two
// tests talk to the leader directly over the client RPC; the last two use the client library (the
// `capstan produce` and `capstan consume` commands, and a producer kept busy while its leader is
// killed) against any node, which answers Metadata from the controller's UpdateMetadata, so the
// client finds the leader itself.

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <sstream>
#include <thread>

#include <caf/all.hpp>
#include <capnp/ez-rpc.h>
#include <kj/async-io.h>
#include <kj/timer.h>

#include "actors/gateway/request_validation.hpp"
#include "runtime/actor/caf_error.hpp"
#include "runtime/client/consumer.hpp"
#include "runtime/client/producer.hpp"
#include "schema/client.capnp.h"
#include "tests/support/caf_fixture.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/log_builder.hpp"
#include "tests/support/free_port.hpp"
#include "tests/support/node_process.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/test_controller.hpp"

using namespace capstan;
using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

const std::string binary = CAPSTAN_BINARY;
constexpr caf::timespan control_timeout = 30s;
const topic_partition tp{"replicated", 0};

// Small waits and backoffs, so that failover and catching up take moments, not seconds.
std::string replication_settings(int64_t lag_ms) {
  return "replica.lag.time.max.ms = " + std::to_string(lag_ms) +
         "\n"
         "replica.fetch.wait.max.ms = 200\n"
         "replica.fetch.backoff.ms = 50\n"
         "replica.socket.timeout.ms = 2000\n";
}

// One `capstan node` with the replication settings, a broker of the test's controller.
std::unique_ptr<node_process> make_node(const temp_dir& dir, int id, const std::string& settings) {
  static const uint16_t absent_voter = free_port();
  return std::make_unique<node_process>(
      dir, id,
      node_process_options{binary, settings, "127.0.0.1:0",
                           {"--controller-quorum", "99@127.0.0.1:" + std::to_string(absent_voter),
                            "--cluster-id", "capstan-replication-test"}});
}

// The test controller in the test's own actor system.
class controller {
public:
  controller() : controller_(spawn_test_controller(system_.sys())) { system_.track(controller_); }
  ~controller() { caf::anon_send_exit(controller_, caf::exit_reason::kill); }
  controller(const controller&) = delete;
  controller& operator=(const controller&) = delete;

  // Connects to the node's endpoint (again after a restart) and sends it the topic configs.
  void connect(const node_process& n) {
    auto endpoint = system_.remote_actor<node_endpoint_actor>(n.cluster_port());
    INFO("node " << n.id() << ": " << (endpoint ? std::string() : caf::to_string(endpoint.error())));
    REQUIRE(endpoint);
    auto ok = system_.request<bool>(controller_, control_timeout, connect_node_atom::value, n.id(),
                                    caf::actor_cast<caf::actor>(*endpoint), n.cluster_port(), n.rpc_port());
    REQUIRE(ok);
    REQUIRE(system_.request<bool>(controller_, control_timeout, topics_atom::value, topics_));
  }

  void topic(const std::string& name, std::map<std::string, std::string> configs) {
    topics_.push_back(topic_config_msg{name, {}, false, std::move(configs)});
    REQUIRE(system_.request<bool>(controller_, control_timeout, topics_atom::value, topics_));
  }

  // LeaderAndIsr to `send_to` (every replica when empty); the nodes must accept it.
  void elect(int leader, int32_t epoch, std::vector<int32_t> replicas, std::vector<int32_t> isr,
             std::vector<int32_t> send_to = {}) {
    auto errors = system_.request<std::vector<partition_error_msg>>(
      controller_, control_timeout, elect_atom::value,
      election{tp, leader, epoch, std::move(replicas), std::move(isr), std::move(send_to)});
    REQUIRE(errors);
    std::string text;
    for (const auto& e : *errors) text += std::string(to_string(e.error)) + ": " + e.message + "; ";
    INFO(text);
    REQUIRE(errors->empty());
  }

  // The state the controller committed (AlterPartition moves its ISR).
  partition_state_msg committed() {
    auto s = system_.request<partition_state_msg>(controller_, control_timeout, state_atom::value, tp);
    REQUIRE(s);
    return *s;
  }

  // The committed state given again to node `id` alone, as a controller does when a broker
  // comes back (the harness's rejoin).
  void rejoin(int id) {
    auto c = committed();
    std::vector<int32_t> replicas, isr;
    for (auto r : c.replicas) replicas.push_back(r.value());
    for (auto r : c.isr) isr.push_back(r.value());
    elect(c.leader.value(), c.epoch.value(), replicas, isr, {id});
  }

  bool in_isr(int id) {
    auto c = committed();
    return std::find(c.isr.begin(), c.isr.end(), node_id{id}) != c.isr.end();
  }

private:
  threaded_system system_;
  test_controller_actor controller_;
  std::vector<topic_config_msg> topics_;
};

struct produce_outcome {
  errc code = errc::unknown_server_error;
  int64_t base_offset = -1;
  std::string message;
};

// A client RPC connection to one node, for produce and fetch on `tp`.
class node_client {
public:
  explicit node_client(uint16_t port) : client_("127.0.0.1", port, reader_options()) {}

  using produce_promise = kj::Promise<capnp::Response<rpc::Capstan::ProduceResults>>;

  // Sends one acks=all produce of a single record with value `value`, without waiting.
  produce_promise send(const std::string& value) {
    auto req = client_.getMain<rpc::Capstan>().produceRequest();
    req.setTopic(tp.first);
    req.setPartition(tp.second);
    req.setAcks(-1);
    req.setTimeoutMs(10000);
    auto batch = make_batch({test_record{std::nullopt, value, 1000}});
    req.setRecords(capnp::Data::Reader(batch.data(), batch.size()));
    return req.send();
  }

  // The answer, or UNKNOWN_SERVER_ERROR with the reason when the call failed (the node died) or
  // took longer than 20 s.
  produce_outcome wait(produce_promise&& p) {
    try {
      auto r = client_.getIoProvider().getTimer().timeoutAfter(20 * kj::SECONDS, kj::mv(p)).wait(client_.getWaitScope());
      return {static_cast<errc>(r.getErrorCode()), r.getBaseOffset(), r.getErrorMessage().cStr()};
    } catch (const kj::Exception& e) {
      return {errc::unknown_server_error, -1, e.getDescription().cStr()};
    }
  }

  produce_outcome produce(const std::string& value) { return wait(send(value)); }

  // Every record below the high watermark, read from offset 0 with fetches; each fetch must
  // serve only records below the high watermark it reports.
  std::vector<read_record> read_committed(int64_t* high_watermark) {
    std::vector<read_record> out;
    int64_t from = 0;
    for (int round = 0; round < 1000; ++round) {
      auto req = client_.getMain<rpc::Capstan>().fetchRequest();
      req.setTopic(tp.first);
      req.setPartition(tp.second);
      req.setOffset(from);
      req.setMaxBytes(1 << 20);
      req.setMinBytes(0);
      req.setMaxWaitMs(0);
      auto r = client_.getIoProvider().getTimer().timeoutAfter(20 * kj::SECONDS, req.send()).wait(client_.getWaitScope());
      INFO(r.getErrorMessage().cStr());
      REQUIRE(static_cast<errc>(r.getErrorCode()) == errc::none);
      *high_watermark = r.getHighWatermark();
      auto data = r.getRecords();
      auto records = records_of(bytes_view{data.begin(), data.size()});
      if (records.empty()) break;
      for (const auto& rec : records) {
        CHECK(rec.off.value() < *high_watermark);
        if (rec.off.value() >= from) out.push_back(rec);
      }
      from = records.back().off.value() + 1;
    }
    return out;
  }

private:
  static capnp::ReaderOptions reader_options() {
    capnp::ReaderOptions o;
    o.traversalLimitInWords = rpc_traversal_limit_words;
    return o;
  }

  capnp::EzRpcClient client_;
};

// Produces `value` to `port` until it is acknowledged (a new leader may still wait for its ISR
// to catch up); the offset it got.
int64_t produce_until_acked(uint16_t port, const std::string& value) {
  produce_outcome last;
  for (int attempt = 0; attempt < 50; ++attempt) {
    node_client client(port);
    last = client.produce(value);
    if (last.code == errc::none) return last.base_offset;
    std::this_thread::sleep_for(100ms);
  }
  FAIL("produce of " << value << " never acknowledged: " << to_string(last.code) << " " << last.message);
  return -1;
}

int run_cli(const temp_dir& dir, const std::string& input, const std::vector<std::string>& args,
            std::string* out, std::string* err) {
  return test::run_cli(binary, dir, input, args, out, err);
}

std::string bootstrap(const node_process& n) { return "127.0.0.1:" + std::to_string(n.rpc_port()); }

struct acked_record {
  std::string value;
  int64_t offset;
};

// Every acknowledged record is in `log` at its offset, and the acknowledgements came in log order.
void check_acked(const std::vector<acked_record>& acked, const std::vector<read_record>& log) {
  int64_t previous = -1;
  for (const auto& a : acked) {
    INFO(a.value << " at offset " << a.offset);
    CHECK(a.offset > previous);
    previous = a.offset;
    REQUIRE(a.offset < static_cast<int64_t>(log.size()));
    CHECK(log[a.offset].off.value() == a.offset);
    CHECK(log[a.offset].value == a.value);
  }
}

} // namespace

TEST_CASE("three nodes keep every acknowledged record when the leader is killed mid-stream",
          "[system][replication]") {
  temp_dir dir("capstan-replication");
  controller ctl;
  std::vector<std::unique_ptr<node_process>> nodes;
  for (int id = 1; id <= 3; ++id) {
    nodes.push_back(make_node(dir, id, replication_settings(10000)));
    nodes.back()->start();
  }
  auto& first = *nodes[0];
  ctl.topic(tp.first, {{"min.insync.replicas", "2"}});
  for (auto& n : nodes) ctl.connect(*n);
  ctl.elect(1, 1, {1, 2, 3}, {1, 2, 3});

  std::vector<acked_record> acked;
  {
    node_client client(first.rpc_port());
    for (int i = 0; i < 10; ++i) {
      auto r = client.produce("before-" + std::to_string(i));
      INFO(r.message);
      REQUIRE(r.code == errc::none);
      acked.push_back({"before-" + std::to_string(i), r.base_offset});
    }
    // Ten more in flight at once (sent together when the first answer is awaited), and the
    // leader killed once that first answer came: the others may or may not be acknowledged, and
    // only those acknowledged are promised.
    std::vector<node_client::produce_promise> in_flight;
    for (int i = 0; i < 10; ++i) in_flight.push_back(client.send("during-" + std::to_string(i)));
    for (int i = 0; i < 10; ++i) {
      auto r = client.wait(kj::mv(in_flight[i]));
      if (i == 0) {
        INFO(r.message);
        REQUIRE(r.code == errc::none);
        first.kill();
      }
      if (r.code == errc::none) acked.push_back({"during-" + std::to_string(i), r.base_offset});
    }
  }

  // The controller's failover: a new leader from the committed ISR, without the dead node.
  auto before = ctl.committed();
  std::vector<int32_t> isr;
  for (auto r : before.isr)
    if (r != node_id{1}) isr.push_back(r.value());
  REQUIRE(isr.size() == 2);
  const int leader = isr.front();
  ctl.elect(leader, before.epoch.value() + 1, {1, 2, 3}, isr, isr);
  auto& new_leader = *nodes[leader - 1];
  for (int i = 0; i < 10; ++i)
    acked.push_back({"after-" + std::to_string(i), produce_until_acked(new_leader.rpc_port(), "after-" + std::to_string(i))});

  int64_t hw = -1;
  auto log = node_client(new_leader.rpc_port()).read_committed(&hw);
  CHECK(static_cast<int64_t>(log.size()) == hw);
  check_acked(acked, log);

  // The killed node comes back, is told its role, catches up and is back in the ISR.
  first.start();
  ctl.connect(first);
  ctl.rejoin(1);
  REQUIRE(eventually([&] { return ctl.in_isr(1); }, 30s));
  for (int i = 0; i < 5; ++i)
    acked.push_back({"rejoined-" + std::to_string(i), produce_until_acked(new_leader.rpc_port(), "rejoined-" + std::to_string(i))});
  log = node_client(new_leader.rpc_port()).read_committed(&hw);
  check_acked(acked, log);

  // Every acks=all write reached the whole ISR, so after a clean stop the three logs are equal.
  for (auto& n : nodes) n->stop();
  const auto leader_log = partition_dir_records(new_leader.partition_dir(tp));
  CHECK(leader_log == log);
  for (auto& n : nodes) {
    INFO("node " << n->id());
    CHECK(partition_dir_records(n->partition_dir(tp)) == leader_log);
  }
}

TEST_CASE("a stalled follower leaves the ISR after replica.lag.time.max.ms and rejoins once it "
          "runs again",
          "[system][replication]") {
  temp_dir dir("capstan-replication");
  controller ctl;
  std::vector<std::unique_ptr<node_process>> nodes;
  for (int id = 1; id <= 3; ++id) {
    nodes.push_back(make_node(dir, id, replication_settings(1500)));
    nodes.back()->start();
  }
  ctl.topic(tp.first, {{"min.insync.replicas", "2"}});
  for (auto& n : nodes) ctl.connect(*n);
  ctl.elect(1, 1, {1, 2, 3}, {1, 2, 3});
  const auto leader_port = nodes[0]->rpc_port();
  std::vector<acked_record> acked;
  for (int i = 0; i < 5; ++i)
    acked.push_back({"all-" + std::to_string(i), produce_until_acked(leader_port, "all-" + std::to_string(i))});

  // Node 3 stops running but keeps its connections: only the leader's lag check can tell.
  auto& stalled = *nodes[2];
  stalled.signal(SIGSTOP);
  {
    node_client client(leader_port);
    for (int i = 0; i < 5; ++i) {
      // acks=all waits for node 3 until it leaves the ISR, then two replicas are enough.
      auto r = client.produce("stalled-" + std::to_string(i));
      INFO(r.message);
      REQUIRE(r.code == errc::none);
      acked.push_back({"stalled-" + std::to_string(i), r.base_offset});
    }
  }
  CHECK_FALSE(ctl.in_isr(3));
  CHECK(ctl.committed().isr.size() == 2);

  stalled.signal(SIGCONT);
  REQUIRE(eventually([&] { return ctl.in_isr(3); }, 30s));
  for (int i = 0; i < 5; ++i)
    acked.push_back({"back-" + std::to_string(i), produce_until_acked(leader_port, "back-" + std::to_string(i))});
  int64_t hw = -1;
  auto log = node_client(leader_port).read_committed(&hw);
  CHECK(static_cast<int64_t>(log.size()) == hw);
  check_acked(acked, log);

  for (auto& n : nodes) n->stop();
  for (auto& n : nodes) {
    INFO("node " << n->id());
    CHECK(partition_dir_records(n->partition_dir(tp)) == log);
  }
}

TEST_CASE("capstan produce --acks all and capstan consume work through any node of three on an RF=3 "
          "topic, bootstrapped at a follower, before and after a failover",
          "[system][replication][cli]") {
  temp_dir dir("capstan-replication");
  controller ctl;
  std::vector<std::unique_ptr<node_process>> nodes;
  for (int id = 1; id <= 3; ++id) {
    nodes.push_back(make_node(dir, id, replication_settings(10000)));
    nodes.back()->start();
  }
  ctl.topic(tp.first, {{"min.insync.replicas", "2"}});
  for (auto& n : nodes) ctl.connect(*n);
  ctl.elect(1, 1, {1, 2, 3}, {1, 2, 3});

  std::string out, err;
  // Without idempotence: the test controller hands out no producer ids.
  // Node 2 follows: the client learns from its Metadata that node 1 leads.
  int code = run_cli(dir, "one\ntwo\nthree\n",
                     {"produce", tp.first, "--acks", "all", "--idempotence", "false", "--bootstrap",
                      bootstrap(*nodes[1])},
                     &out, &err);
  INFO(err);
  REQUIRE(code == 0);
  for (auto& n : nodes) {
    INFO("consumed through node " << n->id());
    code = run_cli(dir, "",
                   {"consume", tp.first, "--from-beginning", "--max-messages", "3", "--timeout-ms", "20000",
                    "--print-offset", "--bootstrap", bootstrap(*n)},
                   &out, &err);
    INFO(err);
    REQUIRE(code == 0);
    CHECK(lines_of(out) == std::vector<std::string>{"0\tone", "1\ttwo", "2\tthree"});
  }

  // The leader dies; the controller elects node 2 from the ISR and tells every node. Clients
  // bootstrapped at node 3 find the new leader through its Metadata.
  nodes[0]->kill();
  ctl.elect(2, 2, {1, 2, 3}, {2, 3}, {2, 3});
  code = run_cli(dir, "four\nfive\n",
                 {"produce", tp.first, "--acks", "all", "--idempotence", "false", "--bootstrap",
                  bootstrap(*nodes[2])},
                 &out, &err);
  INFO(err);
  REQUIRE(code == 0);
  code = run_cli(dir, "",
                 {"consume", tp.first, "--from-beginning", "--max-messages", "5", "--timeout-ms", "20000",
                  "--bootstrap", bootstrap(*nodes[2])},
                 &out, &err);
  INFO(err);
  REQUIRE(code == 0);
  CHECK(lines_of(out) == std::vector<std::string>{"one", "two", "three", "four", "five"});

  nodes[1]->stop();
  nodes[2]->stop();
}

TEST_CASE("the client library's acks=all producer goes on at the new leader when its leader is killed "
          "mid-stream, losing no acknowledged record",
          "[system][replication][client]") {
  temp_dir dir("capstan-replication");
  controller ctl;
  std::vector<std::unique_ptr<node_process>> nodes;
  for (int id = 1; id <= 3; ++id) {
    nodes.push_back(make_node(dir, id, replication_settings(10000)));
    nodes.back()->start();
  }
  ctl.topic(tp.first, {{"min.insync.replicas", "2"}});
  for (auto& n : nodes) ctl.connect(*n);
  ctl.elect(1, 1, {1, 2, 3}, {1, 2, 3});

  client::client_config config;
  config.bootstrap = {bootstrap(*nodes[1]), bootstrap(*nodes[2])};
  config.acks = -1;
  config.linger_ms = 1;
  config.batch_size = 2048;
  config.request_timeout_ms = 5000;
  // Long enough for the failover: what is in flight when the leader dies is retried until the
  // controller names the new leader.
  config.delivery_timeout_ms = 60000;
  config.retry_backoff_ms = 50;
  config.buffer_memory = 1 << 20;
  // The test controller hands out no producer ids (initProducerId needs the node's own controller
  // or metadata actor): tests/system/idempotence_test.cpp covers the idempotent producer.
  config.enable_idempotence = false;

  std::mutex mu;
  std::map<int64_t, std::string> acknowledged;
  std::vector<std::string> failures;
  std::atomic<uint64_t> acked{0};
  std::atomic<bool> stop{false};
  auto connected = client::cluster_client::connect(config);
  INFO((connected ? std::string() : connected.err().to_string()));
  REQUIRE(connected);
  {
    std::thread writer([&] {
      client::producer producer(**connected, config);
      for (int i = 0; !stop && i < 1000000; ++i) {
        auto value = std::make_shared<std::string>("record-" + std::to_string(i));
        producer.send(tp.first, std::nullopt,
                      bytes_view(reinterpret_cast<const uint8_t*>(value->data()), value->size()), tp.second,
                      [&, value](result<client::record_metadata> r) {
                        std::lock_guard lock(mu);
                        if (!r) {
                          failures.push_back(*value + ": " + r.err().to_string());
                          return;
                        }
                        acknowledged[r->off.value()] = *value;
                        ++acked;
                      });
      }
      producer.flush();
    });
    auto acked_at_least = [&](uint64_t n) {
      return eventually([&] { return acked >= n; }, 30s);
    };
    const bool before = acked_at_least(2000);
    // The leader dies with batches in flight; the controller elects node 2 from the ISR.
    nodes[0]->kill();
    ctl.elect(2, 2, {1, 2, 3}, {2, 3}, {2, 3});
    const auto at_failover = acked.load();
    const bool after = acked_at_least(at_failover + 2000);
    stop = true;
    writer.join();
    REQUIRE(before);
    REQUIRE(after);
  }
  {
    std::lock_guard lock(mu);
    INFO((failures.empty() ? std::string() : failures.front()));
    CHECK(failures.empty());
  }

  // Read back through node 3: every acknowledged record at the offset it was acknowledged with.
  client::consumer consumer(**connected, config);
  REQUIRE(consumer.assign(tp.first));
  REQUIRE(consumer.seek_to_beginning());
  std::map<int64_t, std::string> stored;
  for (;;) {
    auto n = consumer.poll_each(2000ms, [&](const client::record_ref& r) {
      stored[r.off.value()] = std::string(reinterpret_cast<const char*>(r.record.value->data()), r.record.value->size());
    });
    REQUIRE(n);
    if (*n == 0) break;
  }
  std::lock_guard lock(mu);
  INFO("acknowledged " << acknowledged.size() << ", stored " << stored.size());
  size_t missing = 0;
  for (const auto& [at, value] : acknowledged) {
    auto it = stored.find(at);
    if (it == stored.end() || it->second != value) ++missing;
  }
  CHECK(missing == 0);
  nodes[1]->stop();
  nodes[2]->stop();
}
