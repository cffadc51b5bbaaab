// Kafka group consumers no one here wrote against a real `capstan node`: python3-confluent-kafka
// (librdkafka) members join, sync, heartbeat, commit, fetch their commits and leave through the
// Kafka listener (docs/kafka.md), on the same coordinator as `capstan consume --group` members,
// with which they share a group.

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "tests/support/child_process.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/node_process.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace std::chrono_literals;

namespace {

// Modes:
//   pair BROKER TOPIC GROUP: two members share the topic's 4 partitions, each commits 100 + p
//     for its partitions and leaves; a third member, alone, gets all 4, reads those commits and
//     leaves; the group is then listed Empty (ListGroups and DescribeGroups).
//   share BROKER TOPIC GROUP: one member joins a group another client's member is in and
//     prints the partitions it gets once it has some but not all four.
// Prints "OK ..." and exits 0 when what it checked holds; every wait is bounded.
constexpr const char* script = R"PY(
import sys, time
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient

mode, broker, topic, group = sys.argv[1:5]

def member(assigned, key):
    c = Consumer({'bootstrap.servers': broker, 'group.id': group, 'client.id': 'py-' + key,
                  'session.timeout.ms': 10000, 'heartbeat.interval.ms': 500,
                  'enable.auto.commit': False, 'partition.assignment.strategy': 'range', 'log_level': 3})
    def on_assign(c, parts):
        assigned[key] = {p.partition for p in parts}
    def on_revoke(c, parts):
        assigned[key] = set()
    c.subscribe([topic], on_assign=on_assign, on_revoke=on_revoke)
    return c

def poll_until(consumers, done, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        for c in consumers:
            c.poll(0.1)
        if done():
            return True
    return False

everything = set(range(4))
assigned = {}
if mode == 'pair':
    a, b = member(assigned, 'a'), member(assigned, 'b')
    def shared():
        x, y = assigned.get('a', set()), assigned.get('b', set())
        return x and y and not (x & y) and (x | y) == everything
    if not poll_until([a, b], shared, 90):
        sys.exit('FAIL no shared assignment: %s' % assigned)
    print('assigned a=%s b=%s' % (sorted(assigned['a']), sorted(assigned['b'])))
    for key, c in (('a', a), ('b', b)):
        c.commit(offsets=[TopicPartition(topic, p, 100 + p) for p in sorted(assigned[key])],
                 asynchronous=False)
    a.close()
    b.close()
    c = member(assigned, 'c')
    if not poll_until([c], lambda: assigned.get('c') == everything, 90):
        sys.exit('FAIL the restarted member did not get every partition: %s' % assigned)
    got = c.committed([TopicPartition(topic, p) for p in range(4)], timeout=30)
    offsets = {tp.partition: tp.offset for tp in got}
    c.close()
    if offsets != {p: 100 + p for p in range(4)}:
        sys.exit('FAIL committed offsets %s' % offsets)
    print('OK committed %s' % offsets)
    # librdkafka's list_groups: ListGroups, then DescribeGroups of each group listed.
    admin = AdminClient({'bootstrap.servers': broker, 'log_level': 3})
    deadline, state = time.time() + 30, None
    while time.time() < deadline and state != 'Empty':
        state = {g.id: g.state for g in admin.list_groups(timeout=10)}.get(group)
    if state != 'Empty':
        sys.exit('FAIL group %s listed as %s' % (group, state))
    print('OK listed %s %s' % (group, state))
elif mode == 'share':
    c = member(assigned, 's')
    if not poll_until([c], lambda: bool(assigned.get('s')) and assigned['s'] != everything, 90):
        sys.exit('FAIL no partition: %s' % assigned)
    print('OK share %s' % sorted(assigned['s']))
    c.close()
)PY";

std::string write_script(const test::temp_dir& dir) {
  const auto path = (dir.path() / "group_member.py").string();
  std::ofstream(path) << script;
  return path;
}

} // namespace

TEST_CASE("confluent-kafka members share a group's partitions and resume from its commits",
          "[system][kafka]") {
  test::temp_dir dir;
  // scripts/setup.sh installs it.
  INFO("python3 confluent_kafka (Debian package python3-confluent-kafka) is missing: "
       "run scripts/setup.sh");
  REQUIRE(test::python_module_present("confluent_kafka", dir.path()));
  test::node_process_options options;
  options.binary = CAPSTAN_BINARY;
  options.settings = "group.initial.rebalance.delay.ms = 0\n";
  test::node_process node{dir, 1, options};
  node.start();
  std::string out, err;
  test::create_topic(node, dir, "orders", 4);
  const std::string broker = node.kafka_bootstrap();
  const int rc = test::run_to_end("/usr/bin/python3", {write_script(dir), "pair", broker, "orders",
                                                       "g"},
                                  dir.path(), &out, &err, 240s);
  INFO(out << err);
  CHECK(rc == 0);
  CHECK(out.find("OK committed") != std::string::npos);
  CHECK(out.find("OK listed g Empty") != std::string::npos);
  // The native API reads the commits the Kafka members made.
  REQUIRE(test::run_to_end(CAPSTAN_BINARY,
                           {"groups", "describe", "g", "--bootstrap", node.bootstrap()}, dir.path(),
                           &out, &err) == 0);
  INFO(out << err);
  CHECK(out.find("g\torders\t3\t103\t") != std::string::npos);
  node.stop();
}

TEST_CASE("a confluent-kafka member and a capstan consume --group member share a topic",
          "[system][kafka]") {
  test::temp_dir dir;
  // scripts/setup.sh installs it.
  INFO("python3 confluent_kafka (Debian package python3-confluent-kafka) is missing: "
       "run scripts/setup.sh");
  REQUIRE(test::python_module_present("confluent_kafka", dir.path()));
  test::node_process_options options;
  options.binary = CAPSTAN_BINARY;
  options.settings = "group.initial.rebalance.delay.ms = 0\n";
  test::node_process node{dir, 1, options};
  node.start();
  std::string out, err;
  test::create_topic(node, dir, "orders", 4);
  test::child_process native{
      CAPSTAN_BINARY,
      {"consume", "orders", "--group", "mix", "--bootstrap", node.bootstrap(),
       "--consumer-property", "session.timeout.ms=6000", "--consumer-property",
       "heartbeat.interval.ms=500", "--consumer-property", "partition.assignment.strategy=range"},
      dir.path(), "native"};
  const bool native_joined = test::eventually(
      [&] {
        return test::run_to_end(CAPSTAN_BINARY,
                                {"groups", "describe", "mix", "--members", "--bootstrap",
                                 node.bootstrap()},
                                dir.path(), &out, &err) == 0 &&
               out.find("\tcapstan\t4\torders(0,1,2,3)") != std::string::npos;
      },
      60s);
  INFO(out << err << native.stderr_text());
  REQUIRE(native_joined);
  const std::string broker = node.kafka_bootstrap();
  const int rc = test::run_to_end("/usr/bin/python3", {write_script(dir), "share", broker, "orders",
                                                       "mix"},
                                  dir.path(), &out, &err, 240s);
  INFO(out << err);
  CHECK(rc == 0);
  // With the native member in the group, the Kafka member gets some partitions, not all four.
  CHECK(out.find("OK share [") != std::string::npos);
  native.signal(SIGTERM);
  CHECK(native.wait(30s).has_value());
  node.stop();
}

TEST_CASE("kcat -G joins a group through the Kafka listener and is assigned every partition",
          "[system][kafka]") {
  // scripts/setup.sh installs it.
  INFO("/usr/bin/kcat (Debian package kcat) is missing: run scripts/setup.sh");
  REQUIRE(std::filesystem::exists("/usr/bin/kcat"));
  test::temp_dir dir;
  test::node_process_options options;
  options.binary = CAPSTAN_BINARY;
  options.settings = "group.initial.rebalance.delay.ms = 0\n";
  test::node_process node{dir, 1, options};
  node.start();
  std::string out, err;
  test::create_topic(node, dir, "orders", 4);
  const std::string broker = node.kafka_bootstrap();
  test::child_process kcat{"/usr/bin/kcat",
                           {"-b", broker, "-G", "kc", "orders", "-X", "log_level=3"},
                           dir.path(),
                           "kcat"};
  // Records cannot be read through the listener yet (no Fetch): the membership is what is
  // checked, through the native API.
  const bool member = test::eventually(
      [&] {
        return test::run_to_end(CAPSTAN_BINARY,
                                {"groups", "describe", "kc", "--members", "--bootstrap",
                                 node.bootstrap()},
                                dir.path(), &out, &err) == 0 &&
               out.find("\trdkafka\t4\torders(0,1,2,3)") != std::string::npos;
      },
      60s);
  INFO(out << err << kcat.stderr_text());
  CHECK(member);
  kcat.signal(SIGTERM);
  CHECK(kcat.wait(30s).has_value());
  node.stop();
}
