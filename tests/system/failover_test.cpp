// Failures of whole `capstan node` processes in a cluster with its own controller quorum
// (tests/support/node_cluster: three voters on 127.0.0.1): a partition leader killed with SIGKILL
// while an acks=all producer writes, restarted on its data dir; any one node killed, paused or cut
// off at a random moment, eight times in a row; and every node stopped (SIGTERM, one SIGKILL) and
// started again. What is promised: the restarted node registers, is unfenced, catches up and is
// back in every ISR; every acknowledged record is read back in order through every node and lies at
// its offset in every replica's log; topics and their configs survive; a clean stop of the active
// controller hands the quorum's leadership over.

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/eventually.hpp"
#include "tests/support/history_check.hpp"
#include "tests/support/log_builder.hpp"
#include "tests/support/node_cluster.hpp"
#include "tests/support/workload.hpp"

using namespace capstan;
using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

const std::string binary = CAPSTAN_BINARY;
constexpr int partitions = 3;

// Every partition's ISR as `via` describes it is {1, 2, 3}; the leader of each.
std::vector<int> await_full_isr(node_cluster& c, const std::string& topic, int count,
                                const node_process& via) {
  std::vector<int> leaders;
  for (int p = 0; p < count; ++p) leaders.push_back(c.await_isr(topic, via, {1, 2, 3}, p));
  return leaders;
}

int64_t last_offset(const std::vector<acked_record>& acked) {
  int64_t last = -1;
  for (const auto& a : acked) last = std::max(last, a.offset);
  return last;
}

// No anomaly (tests/support/history_check.hpp) in partition `p` of `topic`: what `producer`
// acknowledged there against `final_read`, what `consumed` read and the `replicas`' logs.
void check_history(const std::string& topic, int p, busy_producer& producer,
                   std::vector<read_record> final_read,
                   std::vector<std::vector<read_record>> consumed = {},
                   std::vector<std::pair<int, std::vector<read_record>>> replicas = {}) {
  partition_history h;
  h.tp = {topic, p};
  h.acked = {producer.acknowledged()[h.tp]};
  h.final_read = std::move(final_read);
  h.consumed = std::move(consumed);
  h.replicas = std::move(replicas);
  const auto found = check_partition(h);
  INFO(describe(found));
  CHECK(found.empty());
}

// After a failover: `producer` gets more acknowledgements in every partition of "orders", and
// once stopped it saw no failure, and every record it had acknowledged is read back through each
// node of `through` in the order it was sent.
void writes_go_on_and_read_back(node_cluster& c, busy_producer& producer,
                                const std::vector<const node_process*>& through) {
  REQUIRE(producer.await_acks(producer.counts(), 100));
  producer.stop();
  {
    const auto failures = producer.failures();
    INFO((failures.empty() ? std::string() : failures.front()));
    CHECK(failures.empty());
  }
  for (int p = 0; p < partitions; ++p) {
    const auto count = static_cast<size_t>(last_offset(producer.acknowledged()[{"orders", p}]) + 1);
    for (const auto* via : through) {
      INFO("partition " << p << " through node " << via->id());
      check_history(
          "orders", p, producer,
          records_of_lines(c.consume("orders", *via, count,
                                     {"--partition", std::to_string(p), "--print-offset"})));
    }
  }
}

// The "Topic: ..." line of `topic describe`: name, id, partition count, replication factor and
// configs, without the partitions' leaders and ISRs.
std::string topic_line(node_cluster& c, const std::string& topic, const node_process& via) {
  std::string out, err;
  const int code = c.cli("", {"topic", "describe", topic}, via, &out, &err);
  INFO(err);
  REQUIRE(code == 0);
  return lines_of(out).at(0);
}

// `topic list` through `via`, sorted.
std::vector<std::string> topic_names(node_cluster& c, const node_process& via) {
  std::string out, err;
  const int code = c.cli("", {"topic", "list"}, via, &out, &err);
  INFO(err);
  REQUIRE(code == 0);
  auto names = lines_of(out);
  std::sort(names.begin(), names.end());
  return names;
}

} // namespace

TEST_CASE(
    "a partition leader killed with SIGKILL while an acks=all producer writes restarts on its "
    "data dir, registers, is unfenced, catches up and is back in every ISR, and every "
    "acknowledged record is read back in order through every node",
    "[system][failover]") {
  node_cluster c(binary, 0);
  c.create_topic("orders", 3, c.node(1), partitions);
  const auto leaders = await_full_isr(c, "orders", partitions, c.node(1));

  // The victim leads a partition; the active controller is spared when another node leads one,
  // so that this case is about a broker's failure (cluster_test kills the controller).
  int controller = 0;
  REQUIRE(eventually([&] { return (controller = c.active_controller()) != 0; }, 30s));
  int victim_id = leaders.front();
  for (int l : leaders)
    if (l != controller) victim_id = l;
  auto& victim = c.node(victim_id);
  INFO("leaders " << leaders[0] << "," << leaders[1] << "," << leaders[2] << ", controller "
                  << controller << ", victim " << victim_id);

  busy_producer producer(c, partitions_of("orders", partitions));
  REQUIRE(producer.await_acks(std::vector<size_t>(partitions, 0), 100));
  victim.kill();

  // Its partitions get new leaders from the rest of the ISR, and acks=all goes on in every one.
  std::vector<int> survivors;
  for (int id = 1; id <= 3; ++id)
    if (id != victim_id) survivors.push_back(id);
  for (int p = 0; p < partitions; ++p)
    c.await_isr("orders", c.node(survivors.front()), survivors, p);
  REQUIRE(producer.await_acks(producer.counts(), 100));

  // Back on its own data dir: it registers anew, is unfenced, truncates what it alone had,
  // catches up and joins every ISR again, all while the producer writes.
  victim.start();
  REQUIRE(eventually(
      [&] {
        const auto log = victim.log();
        return log.find("node " + std::to_string(victim_id) + ": registered with controller") !=
                   std::string::npos &&
               log.find("node " + std::to_string(victim_id) + ": unfenced") != std::string::npos;
      },
      60s));
  for (auto& n : c.nodes) await_full_isr(c, "orders", partitions, *n);
  // Read back through every node: every acknowledged record, in the order it was sent.
  std::vector<const node_process*> every;
  for (auto& n : c.nodes) every.push_back(n.get());
  writes_go_on_and_read_back(c, producer, every);

  // Every replica holds every acknowledged record at its offset, the restarted one included, and
  // no replica kept a tail of its own: after a clean stop the three logs of a partition are equal.
  for (auto& n : c.nodes) n->stop();
  for (int p = 0; p < partitions; ++p) {
    const topic_partition tp{"orders", p};
    const auto first = partition_dir_records(c.node(1).partition_dir(tp));
    std::vector<std::pair<int, std::vector<read_record>>> replicas;
    for (auto& n : c.nodes) {
      INFO("partition " << p << " on node " << n->id());
      replicas.emplace_back(n->id(), partition_dir_records(n->partition_dir(tp)));
      CHECK(replicas.back().second == first);
    }
    check_history("orders", p, producer, first, {}, replicas);
  }
}

TEST_CASE(
    "any one node killed with SIGKILL, paused or cut off from its peers at a random moment, "
    "eight rounds in a row, loses no acknowledged acks=all record, stores none twice, and the "
    "replicas end with equal logs",
    "[system][failover]") {
  node_cluster c(binary, 0, "fault.injection.enable = true\n");
  c.create_topic("chaos", 3, c.node(1), partitions);
  await_full_isr(c, "chaos", partitions, c.node(1));

  const auto seed = std::random_device{}();
  std::mt19937 rng(seed);
  const auto draw = [&rng](int low, int high) {
    return std::uniform_int_distribution<int>(low, high)(rng);
  };
  INFO("seed " << seed);
  std::string faults;

  busy_producer producer(c, partitions_of("chaos", partitions), 5);
  busy_consumer reader(c, "chaos");
  REQUIRE(producer.await_acks(std::vector<size_t>(partitions, 0), 20));
  for (int round = 0; round < 8; ++round) {
    const int victim_id = draw(1, 3);
    std::vector<int> others;
    for (int id = 1; id <= 3; ++id)
      if (id != victim_id) others.push_back(id);
    std::this_thread::sleep_for(std::chrono::milliseconds(draw(0, 500)));
    INFO("round " << round << " on node " << victim_id << ", after:" << faults);
    const int kind = draw(0, 2);
    if (kind == 0) {
      faults += " kill " + std::to_string(victim_id);
      c.node(victim_id).kill();
      // The rest of each ISR goes on taking acks=all writes without it.
      for (int p = 0; p < partitions; ++p) c.await_isr("chaos", c.node(others.front()), others, p);
      REQUIRE(producer.await_acks(producer.counts(), 20));
      c.node(victim_id).start();
    } else if (kind == 1) {
      // A stalled process (a long GC pause, a VM descheduled): it may lose its leaderships while
      // it sleeps and must not act on them once it wakes.
      const int pause_ms = draw(200, 4000);
      faults += " pause " + std::to_string(victim_id) + " " + std::to_string(pause_ms) + " ms";
      c.node(victim_id).signal(SIGSTOP);
      std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
      c.node(victim_id).signal(SIGCONT);
    } else {
      std::string peers = std::to_string(others[0]) + "," + std::to_string(others[1]);
      if (draw(0, 1) == 0) peers = std::to_string(others[static_cast<size_t>(draw(0, 1))]);
      const int cut_ms = draw(200, 4000);
      faults +=
          " cut " + std::to_string(victim_id) + "-" + peers + " " + std::to_string(cut_ms) + " ms";
      const auto fault = [&](const std::vector<std::string>& args) {
        std::string out, err;
        const int code = c.cli("", args, c.node(victim_id), &out, &err);
        INFO(err);
        REQUIRE(code == 0);
      };
      fault({"debug", "fault", "isolate", "--peers", peers});
      std::this_thread::sleep_for(std::chrono::milliseconds(cut_ms));
      fault({"debug", "fault", "clear"});
    }
    for (auto& n : c.nodes) await_full_isr(c, "chaos", partitions, *n);
  }
  INFO("faults:" << faults);
  REQUIRE(producer.await_acks(producer.counts(), 20));
  producer.stop();
  {
    const auto failures = producer.failures();
    INFO((failures.empty() ? std::string() : failures.front()));
    CHECK(failures.empty());
  }

  for (int p = 0; p < partitions; ++p) {
    const auto count = static_cast<size_t>(last_offset(producer.acknowledged()[{"chaos", p}]) + 1);
    INFO("partition " << p);
    check_history(
        "chaos", p, producer,
        records_of_lines(c.consume("chaos", c.node(1), count,
                                   {"--partition", std::to_string(p), "--print-offset"})));
  }
  // The consumer catches up with every acknowledged record before it stops.
  std::map<int, int64_t> ends;
  for (int p = 0; p < partitions; ++p)
    ends[p] = last_offset(producer.acknowledged()[{"chaos", p}]) + 1;
  CHECK(eventually([&] { return reader.reached(ends); }, 60s));
  reader.stop();
  {
    const auto errors = reader.errors();
    INFO((errors.empty() ? std::string() : errors.front()));
    CHECK(errors.empty());
  }
  for (auto& n : c.nodes) n->stop();
  // Every replica holds the same log, with every acknowledged record at its offset and none twice
  // (idempotence across the faults' retries); the consumer read below the high watermark only, so
  // every record it saw stayed in the log at its offset, and it saw each offset once, in order.
  const auto read = reader.records();
  for (int p = 0; p < partitions; ++p) {
    const topic_partition tp{"chaos", p};
    const auto first = partition_dir_records(c.node(1).partition_dir(tp));
    std::vector<std::pair<int, std::vector<read_record>>> replicas;
    for (auto& n : c.nodes) {
      INFO("partition " << p << " on node " << n->id());
      replicas.emplace_back(n->id(), partition_dir_records(n->partition_dir(tp)));
      CHECK(replicas.back().second == first);
    }
    const auto seen = read.find(p);
    REQUIRE(seen != read.end());
    check_history("chaos", p, producer, first, {seen->second}, replicas);
  }
}

TEST_CASE("a node killed with SIGKILL while another is paused is fenced as soon as its connections "
          "close, long before its session would run out, and the paused node is not",
          "[system][failover]") {
  // Sessions far longer than any wait below: only its closed connection can fence the victim.
  node_cluster c(binary, 0, "broker.session.timeout.ms = 120000\n");
  c.create_topic("orders", 3, c.node(1), partitions);
  const auto leaders = await_full_isr(c, "orders", partitions, c.node(1));
  int controller = 0;
  REQUIRE(eventually([&] { return (controller = c.active_controller()) != 0; }, 30s));
  // The victim leads a partition unless the controller leads them all; the third node is paused.
  int victim_id = controller % 3 + 1;
  for (int l : leaders)
    if (l != controller) victim_id = l;
  const int paused_id = 6 - controller - victim_id;
  INFO("controller " << controller << ", victim " << victim_id << ", paused " << paused_id);

  busy_producer producer(c, partitions_of("orders", partitions));
  REQUIRE(producer.await_acks(std::vector<size_t>(partitions, 0), 100));
  c.node(paused_id).signal(SIGSTOP);
  c.node(victim_id).kill();
  std::this_thread::sleep_for(2s);
  c.node(paused_id).signal(SIGCONT);

  std::vector<int> survivors{controller, paused_id};
  std::sort(survivors.begin(), survivors.end());
  for (int p = 0; p < partitions; ++p) c.await_isr("orders", c.node(controller), survivors, p);
  const auto nodes = c.registered_nodes(c.node(controller));
  INFO(untabbed(nodes));
  CHECK(nodes.find("\t" + std::to_string(victim_id) + "\tfenced") != std::string::npos);
  CHECK(nodes.find("\t" + std::to_string(paused_id) + "\tunfenced") != std::string::npos);

  writes_go_on_and_read_back(c, producer, {&c.node(controller)});
}

TEST_CASE("the active controller killed with SIGKILL with the partitions it leads is fenced by "
          "the next controller as soon as its address refuses a connection, long before its "
          "session would run out",
          "[system][failover]") {
  // Sessions far longer than any wait below: the new controller never had the victim's
  // connections, and only the refused one can tell it the victim is gone.
  node_cluster c(binary, 0, "broker.session.timeout.ms = 120000\n");
  c.create_topic("orders", 3, c.node(1), partitions);
  const auto leaders = await_full_isr(c, "orders", partitions, c.node(1));
  int victim_id = 0;
  REQUIRE(eventually([&] { return (victim_id = c.active_controller()) != 0; }, 30s));
  INFO("leaders " << leaders[0] << "," << leaders[1] << "," << leaders[2] << ", controller "
                  << victim_id);

  busy_producer producer(c, partitions_of("orders", partitions));
  REQUIRE(producer.await_acks(std::vector<size_t>(partitions, 0), 100));
  c.node(victim_id).kill();

  std::vector<int> survivors;
  for (int id = 1; id <= 3; ++id)
    if (id != victim_id) survivors.push_back(id);
  auto& via = c.node(survivors.front());
  for (int p = 0; p < partitions; ++p) c.await_isr("orders", via, survivors, p);
  const auto nodes = c.registered_nodes(via);
  INFO(untabbed(nodes));
  CHECK(nodes.find("\t" + std::to_string(victim_id) + "\tfenced") != std::string::npos);

  writes_go_on_and_read_back(c, producer, {&via});
}

TEST_CASE("after every node of the cluster is stopped (SIGTERM, one SIGKILL) and started again, "
          "every topic, its configs and every committed record are there",
          "[system][failover]") {
  node_cluster c(binary, 0);
  c.create_topic("plain", 3, c.node(1), 2);
  c.create_topic("tuned", 3, c.node(2), 1,
                 {"min.insync.replicas=2", "retention.ms=86400000", "segment.bytes=1048576"});
  await_full_isr(c, "plain", 2, c.node(3));
  await_full_isr(c, "tuned", 1, c.node(3));

  std::string out, err;
  std::string plain_input, tuned_input;
  std::vector<std::string> plain_values, tuned_values;
  for (int i = 0; i < 20; ++i) {
    plain_values.push_back("plain-" + std::to_string(i));
    plain_input += plain_values.back() + "\n";
  }
  for (int i = 0; i < 10; ++i) {
    tuned_values.push_back("tuned-" + std::to_string(i));
    tuned_input += tuned_values.back() + "\n";
  }
  int code = c.cli(plain_input, {"produce", "plain", "--acks", "all"}, c.node(1), &out, &err);
  INFO(err);
  REQUIRE(code == 0);
  code = c.cli(tuned_input, {"produce", "tuned", "--acks", "all"}, c.node(2), &out, &err);
  INFO(err);
  REQUIRE(code == 0);
  const auto topics = topic_names(c, c.node(1));
  CHECK(std::count(topics.begin(), topics.end(), "plain") == 1);
  CHECK(std::count(topics.begin(), topics.end(), "tuned") == 1);
  const auto plain_line = topic_line(c, "plain", c.node(1));
  const auto tuned_line = topic_line(c, "tuned", c.node(1));
  CHECK(tuned_line.find("retention.ms=86400000") != std::string::npos);
  CHECK(tuned_line.find("segment.bytes=1048576") != std::string::npos);

  // The active controller first: its clean stop hands the quorum's leadership to a voter that
  // the remaining two elect at once, while the old one is still stopping.
  int controller = 0;
  REQUIRE(eventually([&] { return (controller = c.active_controller()) != 0; }, 30s));
  const int second = controller % 3 + 1;
  const int last = second % 3 + 1;
  c.node(controller).stop();
  const std::string handed = "handed the controller quorum's leadership to node ";
  const auto stopped_log = c.node(controller).log();
  const auto at = stopped_log.find(handed);
  INFO(stopped_log.substr(stopped_log.size() > 4000 ? stopped_log.size() - 4000 : 0));
  REQUIRE(at != std::string::npos);
  const int told = std::stoi(stopped_log.substr(at + handed.size()));
  int next = 0;
  REQUIRE(eventually([&] { return (next = c.active_controller()) != 0; }, 30s));
  CHECK(next == told);
  c.node(second).stop();
  c.node(last).kill();
  for (auto& n : c.nodes) n->start();

  for (auto& n : c.nodes) {
    INFO("node " << n->id());
    await_full_isr(c, "plain", 2, *n);
    await_full_isr(c, "tuned", 1, *n);
    // Same topics, ids, partition counts and configs as before.
    CHECK(topic_names(c, *n) == topics);
    CHECK(topic_line(c, "plain", *n) == plain_line);
    CHECK(topic_line(c, "tuned", *n) == tuned_line);

    CHECK(c.consume("tuned", *n, tuned_values.size()) == tuned_values);
    auto plain = c.consume("plain", *n, plain_values.size());
    std::sort(plain.begin(), plain.end());
    auto expected = plain_values;
    std::sort(expected.begin(), expected.end());
    CHECK(plain == expected);
  }

  // The restarted cluster takes acks=all writes again.
  const bool produced = eventually(
      [&] {
        return c.cli("after\n", {"produce", "tuned", "--acks", "all"}, c.node(3), &out, &err) == 0;
      },
      60s);
  INFO(err);
  REQUIRE(produced);
  auto with_after = tuned_values;
  with_after.push_back("after");
  CHECK(c.consume("tuned", c.node(1), with_after.size()) == with_after);

  for (auto& n : c.nodes) n->stop();
}

TEST_CASE("the last node of a whole-cluster stop stops at once when the other voters are gone",
          "[system][failover]") {
  // It asked the stopped voters for its controlled shutdown until the shutdown's window closed,
  // seconds a whole-cluster stop spent for nothing.
  node_cluster c(binary, 0);
  // Every node registered: a full ISR on each.
  c.create_topic("t", 3, c.node(1));
  await_full_isr(c, "t", 1, c.node(1));
  int controller = 0;
  REQUIRE(eventually([&] { return (controller = c.active_controller()) != 0; }, 30s));
  c.node(controller).stop();
  int next = 0;
  REQUIRE(eventually([&] { return (next = c.active_controller()) != 0; }, 30s));
  const int last = 6 - controller - next;
  // The last two voters: no controller can be elected once `next` is gone.
  c.node(next).stop();
  c.node(last).stop();
  const auto log = c.node(last).log();
  INFO(log.substr(log.size() > 4000 ? log.size() - 4000 : 0));
  CHECK(log.find("controlled shutdown not confirmed: most controller voters are gone") !=
        std::string::npos);
}
