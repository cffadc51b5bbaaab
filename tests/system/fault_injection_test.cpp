// The fault switch of real `capstan node` processes (fault.injection.enable, `capstan debug
// fault`, docs/operations.md): refused while the key is off; a partition leader cut off from the
// other two nodes of a three-voter cluster stops acknowledging acks=all writes, is fenced and
// replaced, and once the fault is cleared truncates what it alone wrote and is back in the ISR
// with a log equal to the others'; a produce response dropped on purpose makes the client retry;
// a leader whose disk fills up hands its partition over and stops, and comes back with a restart.

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/client/cluster_client.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/log_builder.hpp"
#include "tests/support/node_cluster.hpp"
#include "tests/support/node_process.hpp"

using namespace capstan;
using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

const std::string binary = CAPSTAN_BINARY;
const std::string enabled = "fault.injection.enable = true\n";

// A node of its own: a single-node cluster.
node_process_options single_node(const std::string& settings) {
  node_process_options o;
  o.binary = binary;
  o.settings = settings;
  return o;
}

std::string lines(const std::string& prefix, int count) {
  std::string out;
  for (int i = 0; i < count; ++i) out += prefix + "-" + std::to_string(i) + "\n";
  return out;
}

std::vector<std::string> values(const std::string& prefix, int count) {
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i) out.push_back(prefix + "-" + std::to_string(i));
  return out;
}

// The bytes of a partition directory's .log segments, in offset order.
std::string log_bytes(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> segments;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".log") segments.push_back(e.path());
  std::sort(segments.begin(), segments.end());
  std::string out;
  for (const auto& s : segments) {
    std::ifstream in(s, std::ios::binary);
    out.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return out;
}

// The lines of the node's log that say where its controller is and whom it fences.
std::string controller_lines(const node_process& n) {
  std::istringstream log(n.log());
  std::string out;
  for (std::string line; std::getline(log, line);)
    if (line.find("controller") != std::string::npos || line.find("fenced") != std::string::npos)
      out += line + "\n";
  return out;
}

std::string ids(const std::vector<int>& list) {
  std::string out;
  for (size_t i = 0; i < list.size(); ++i) out += (i ? "," : "") + std::to_string(list[i]);
  return out;
}

// A client of the client library that knows `via` alone, so its produce goes to the partition
// leader `via`'s metadata names, however stale.
std::unique_ptr<client::cluster_client> client_of(const node_process& via, int16_t acks,
                                                  int32_t delivery_timeout_ms = 6000) {
  client::client_config config;
  config.bootstrap = {via.bootstrap()};
  config.acks = acks;
  config.request_timeout_ms = 3000;
  config.delivery_timeout_ms = delivery_timeout_ms;
  config.retry_backoff_ms = 50;
  auto connected = client::cluster_client::connect(config);
  INFO((connected ? std::string() : connected.err().to_string()));
  REQUIRE(connected);
  return std::move(*connected);
}

} // namespace

TEST_CASE("debug fault is refused with POLICY_VIOLATION unless fault.injection.enable is set",
          "[system][fault]") {
  temp_dir dir("capstan-fault");
  node_process node(dir, 1, single_node(""));
  node.start();
  std::string out, err;
  const std::vector<std::vector<std::string>> commands = {
      {"debug", "fault", "isolate", "--peers", "2,3"},
      {"debug", "fault", "drop-produce-responses", "1"},
      {"debug", "fault", "disk-full"},
      {"debug", "fault", "clear"}};
  for (auto args : commands) {
    args.push_back("--bootstrap");
    args.push_back(node.bootstrap());
    CHECK(run_cli(binary, dir, "", args, &out, &err) == 1);
    INFO(err);
    CHECK(err.find("POLICY_VIOLATION") != std::string::npos);
    CHECK(err.find("fault.injection.enable") != std::string::npos);
  }
  node.stop();
}

TEST_CASE("a leader cut off by the fault switch stops acknowledging acks=all writes, and once "
          "cleared truncates its divergent tail and rejoins the ISR with an equal log",
          "[system][fault]") {
  node_cluster c(binary, 0, enabled);
  c.create_topic("cut", 3, c.node(1), 1, {"min.insync.replicas=2"});
  const int old_leader = c.await_isr("cut", c.node(1), {1, 2, 3});
  std::vector<int> others;
  for (int id = 1; id <= 3; ++id)
    if (id != old_leader) others.push_back(id);
  auto& cut_off = c.node(old_leader);
  auto& survivor = c.node(others.front());
  INFO("old leader " << old_leader << ", others " << ids(others));

  std::string out, err;
  REQUIRE(c.cli(lines("before", 5), {"produce", "cut", "--acks", "all"}, cut_off, &out, &err) == 0);

  INFO(err);
  REQUIRE(c.cli("", {"debug", "fault", "isolate", "--peers", ids(others)}, cut_off, &out, &err) ==
          0);
  CHECK(out.find("Isolated from nodes " + ids(others)) != std::string::npos);

  // The others fence it (no heartbeats) and elect a leader among themselves.
  const auto after_cut =
      c.await_partition("cut", survivor, [&](const node_cluster::partition_row& r) {
        return r.leader != old_leader && r.leader > 0 && r.isr == others;
      });
  auto& new_leader = c.node(after_cut.leader);

  // The cut-off node still believes it leads, but no follower fetches from it: an acks=all write
  // it takes is never acknowledged.
  {
    auto client = client_of(cut_off, -1);
    auto r = client->produce_sync("cut", 0, -1, make_batch(1, "unacked", 1000));
    CHECK_FALSE(r);
  }
  // acks=1 writes land in its log alone: the divergent tail.
  REQUIRE(c.cli(lines("diverged", 3), {"produce", "cut", "--acks", "1"}, cut_off, &out, &err) == 0);

  // The new leader takes acks=all writes from the others.
  REQUIRE(c.cli(lines("after", 5), {"produce", "cut", "--acks", "all"}, new_leader, &out, &err) ==
          0);

  REQUIRE(c.cli("", {"debug", "fault", "clear"}, cut_off, &out, &err) == 0);

  // Back: unfenced, a follower of the new leader, truncated to the common epoch, caught up and in
  // the ISR as every node sees it.
  for (auto& n : c.nodes) c.await_isr("cut", *n, {1, 2, 3});
  REQUIRE(c.cli(lines("final", 2), {"produce", "cut", "--acks", "all"}, cut_off, &out, &err) == 0);

  auto expected = values("before", 5);
  for (const auto& v : values("after", 5)) expected.push_back(v);
  for (const auto& v : values("final", 2)) expected.push_back(v);
  for (auto& n : c.nodes) {
    INFO("read through node " << n->id());
    CHECK(c.consume("cut", *n, expected.size()) == expected);
  }

  // After a clean stop the three logs are equal, record for record and byte for byte: nothing of
  // the cut-off node's own tail is left.
  for (auto& n : c.nodes) n->stop();
  const topic_partition tp{"cut", 0};
  const auto first = partition_dir_records(c.node(1).partition_dir(tp));
  REQUIRE(first.size() == expected.size());
  for (size_t i = 0; i < first.size(); ++i) CHECK(first[i].value == expected[i]);
  const auto first_bytes = log_bytes(c.node(1).partition_dir(tp));
  for (auto& n : c.nodes) {
    INFO("node " << n->id());
    CHECK(partition_dir_records(n->partition_dir(tp)) == first);
    CHECK(log_bytes(n->partition_dir(tp)) == first_bytes);
  }
}

TEST_CASE("a leader whose disk fills up (debug fault disk-full) loses its partition to an in-sync "
          "replica, stops once its Raft log cannot take a record, and restarted on its data dir "
          "rejoins the ISR with every acknowledged record",
          "[system][fault]") {
  node_cluster c(binary, 0, enabled);
  c.create_topic("full", 3, c.node(1), 1, {"min.insync.replicas=2"});
  const int old_leader = c.await_isr("full", c.node(1), {1, 2, 3});
  std::vector<int> others;
  for (int id = 1; id <= 3; ++id)
    if (id != old_leader) others.push_back(id);
  auto& full = c.node(old_leader);
  auto& survivor = c.node(others.front());
  INFO("old leader " << old_leader << ", others " << ids(others));

  std::string out, err;
  REQUIRE(c.cli(lines("before", 5), {"produce", "full", "--acks", "all"}, full, &out, &err) == 0);
  INFO(err);
  REQUIRE(c.cli("", {"debug", "fault", "disk-full"}, full, &out, &err) == 0);
  CHECK(out.find("disk is full") != std::string::npos);

  // Its append fails with KAFKA_STORAGE_ERROR and the partition goes offline there. The client
  // retries that error, as Kafka's does: the controller hears of the offline replica and moves
  // the leadership to the other two, where the retry is acknowledged.
  {
    auto client = client_of(full, -1, 30000);
    auto r = client->produce_sync("full", 0, -1, make_batch(1, "retried", 1000));
    INFO((r ? std::string() : r.err().to_string()));
    REQUIRE(r);
  }
  c.await_partition("full", survivor, [&](const node_cluster::partition_row& r) {
    return r.leader != old_leader && r.leader > 0 && r.isr == others;
  });
  // That ISR change is a record the full node's Raft log cannot take: it stops, without marking
  // a clean shutdown.
  const auto code = full.wait_for_exit(60s);
  REQUIRE(code.has_value());
  CHECK(*code == 1);
  CHECK(full.log().find("its Raft files cannot be written") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(full.data_dir() / "clean-shutdown"));

  REQUIRE(c.cli(lines("after", 5), {"produce", "full", "--acks", "all"}, survivor, &out, &err) ==
          0);
  full.start();
  for (auto& n : c.nodes) c.await_isr("full", *n, {1, 2, 3});
  auto expected = values("before", 5);
  expected.push_back("retried-0");
  for (const auto& v : values("after", 5)) expected.push_back(v);
  for (auto& n : c.nodes) {
    INFO("read through node " << n->id());
    CHECK(c.consume("full", *n, expected.size()) == expected);
  }
}

TEST_CASE("a produce response dropped by the fault switch makes the client retry, and the "
          "record is stored twice without idempotence",
          "[system][fault]") {
  temp_dir dir("capstan-fault");
  node_process node(dir, 1, single_node(enabled));
  node.start();
  std::string out, err;
  REQUIRE(run_cli(binary, dir, "", {"topic", "create", "drops", "--bootstrap", node.bootstrap()},
                  &out, &err) == 0);
  INFO(err);
  REQUIRE(
      run_cli(binary, dir, "",
              {"debug", "fault", "drop-produce-responses", "1", "--bootstrap", node.bootstrap()},
              &out, &err) == 0);
  CHECK(out.find("Dropping the next 1 produce responses") != std::string::npos);

  // The first attempt is appended but its answer is lost (the client hears a lost connection);
  // the retry is appended again and acknowledged.
  auto client = client_of(node, 1);
  auto r = client->produce_sync("drops", 0, 1, make_batch(1, "once", 1000));
  INFO((r ? std::string() : r.err().to_string()));
  REQUIRE(r);
  CHECK(r->base_offset.value() == 1);
  // The switch is spent: the next produce is answered at once.
  auto next = client->produce_sync("drops", 0, 1, make_batch(1, "next", 1000));
  REQUIRE(next);
  CHECK(next->base_offset.value() == 2);
  node.stop();

  const auto stored = partition_dir_records(node.partition_dir({"drops", 0}));
  std::vector<std::string> got;
  for (const auto& rec : stored) got.push_back(rec.value.value_or(""));
  CHECK(got == std::vector<std::string>{"once-0", "once-0", "next-0"});
}

TEST_CASE("capstan produce with idempotence stores every line once when produce responses "
          "are dropped",
          "[system][fault][idempotence]") {
  temp_dir dir("capstan-fault");
  node_process node(dir, 1, single_node(enabled));
  node.start();
  std::string out, err;
  REQUIRE(run_cli(binary, dir, "", {"topic", "create", "dedup", "--bootstrap", node.bootstrap()},
                  &out, &err) == 0);
  INFO(err);
  REQUIRE(
      run_cli(binary, dir, "",
              {"debug", "fault", "drop-produce-responses", "3", "--bootstrap", node.bootstrap()},
              &out, &err) == 0);

  // No linger, so the lines go out in several requests, and three answers are lost. Each lost
  // answer is retried with its batch's sequence, which the leader recognises as a duplicate.
  const int count = 200;
  REQUIRE(run_cli(binary, dir, lines("line", count),
                  {"produce", "dedup", "--linger-ms", "0", "--bootstrap", node.bootstrap()}, &out,
                  &err) == 0);
  node.stop();

  std::vector<std::string> got;
  for (const auto& rec : partition_dir_records(node.partition_dir({"dedup", 0})))
    got.push_back(rec.value.value_or(""));
  CHECK(got == values("line", count));
}

TEST_CASE("when the active controller's node is cut off, the other nodes heartbeat the new "
          "active controller within their sessions and are not fenced",
          "[system][fault]") {
  // A session shorter than the 2 s a registration may wait: the others' heartbeats to the cut-off
  // node go unanswered while the new active controller counts their sessions down from the
  // moment it takes over, so a heartbeat may not wait that long.
  node_cluster c(binary, 0, enabled + "broker.session.timeout.ms = 1500\n");
  // Every node unfenced (only those have sessions): all three in an ISR.
  c.create_topic("cut", 3, c.node(1));
  c.await_isr("cut", c.node(1), {1, 2, 3});
  int active = 0;
  REQUIRE(eventually([&] { return (active = c.active_controller()) != 0; }, 60s));
  std::vector<int> others;
  for (int id = 1; id <= 3; ++id)
    if (id != active) others.push_back(id);
  INFO("active controller " << active << ", others " << ids(others));
  std::string out, err;
  REQUIRE(c.cli("", {"debug", "fault", "isolate", "--peers", ids(others)}, c.node(active), &out,
                &err) == 0);

  // The new active controller fences the cut-off node once its session runs out; the others'
  // sessions began with it and run out no later, had they not heartbeated.
  const auto expired = [&](int node) {
    const auto needle = "the session of node " + std::to_string(node) + " expired";
    for (int id : others)
      if (c.node(id).log().find(needle) != std::string::npos) return true;
    return false;
  };
  REQUIRE(eventually([&] { return expired(active); }, 60s));
  const bool fenced = eventually([&] { return expired(others[0]) || expired(others[1]); }, 3s);
  if (fenced)
    for (int id : others) UNSCOPED_INFO("node " << id << ":\n" << controller_lines(c.node(id)));
  CHECK_FALSE(fenced);
}
