// kafkajs, a Kafka client in JavaScript no one here wrote, against a real `capstan node` through
// its Kafka listener (docs/kafka.md): an idempotent producer writes with acks=all, two members
// of one consumer group share the topic's partitions and commit, and a later member of the group
// resumes after those commits. scripts/setup.sh installs kafkajs with npm into tests/kafkajs.

#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "tests/support/child_process.hpp"
#include "tests/support/node_process.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace std::chrono_literals;

namespace {

const std::string kafkajs_dir = CAPSTAN_KAFKAJS_DIR;

// Arguments: MODULES BROKER TOPIC MODE COUNT
//   produce: COUNT keyed records "v0".."v<COUNT-1>" with an idempotent producer and acks=all.
//   pair: two members of group "js" share the topic's partitions until they read COUNT distinct
//     records, then leave (committing); prints each member's partitions.
//   resume: one member of group "js" reads until it has COUNT records, and prints how many of
//     them it read that the pair had read already (0 when it resumed from their commits).
// Prints "OK ..." and exits 0 when what it checked holds; every wait is bounded.
constexpr const char* script = R"JS(
const [modules, broker, topic, mode, countText] = process.argv.slice(2);
const { Kafka, logLevel } = require(modules + '/node_modules/kafkajs');
const count = Number(countText);
const kafka = new Kafka({ clientId: 'capstan-kafkajs-test', brokers: [broker],
                          logLevel: logLevel.ERROR, retry: { retries: 20 } });

function fail(why) { console.log('FAIL ' + why); process.exit(1); }
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(pred, seconds, what) {
  const end = Date.now() + seconds * 1000;
  while (!pred()) {
    if (Date.now() > end) fail('timed out: ' + what());
    await sleep(100);
  }
}

async function produce() {
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const messages = [];
  for (let i = 0; i < count; ++i) messages.push({ key: 'k' + i, value: 'v' + i });
  for (let i = 0; i < messages.length; i += 50)
    await producer.send({ topic, acks: -1, messages: messages.slice(i, i + 50) });
  await producer.disconnect();
  console.log('OK produced ' + count);
}

function member(seen, assigned, name) {
  const consumer = kafka.consumer({ groupId: 'js', sessionTimeout: 10000, heartbeatInterval: 500,
                                    rebalanceTimeout: 10000 });
  consumer.on(consumer.events.GROUP_JOIN, (e) => {
    assigned[name] = (e.payload.memberAssignment[topic] || []).slice().sort();
  });
  return { consumer, start: async () => {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => {
      seen.add(message.value.toString());
    } });
  } };
}

async function pair() {
  const seen = new Set();
  const assigned = {};
  const a = member(seen, assigned, 'a');
  const b = member(seen, assigned, 'b');
  await a.start();
  await b.start();
  const split = () => assigned.a && assigned.b && assigned.a.length > 0 && assigned.b.length > 0 &&
                      assigned.a.length + assigned.b.length === 4 &&
                      assigned.a.every((p) => !assigned.b.includes(p));
  await until(() => split() && seen.size === count, 120,
              () => JSON.stringify(assigned) + ' read ' + seen.size);
  console.log('OK pair a=' + assigned.a.join(',') + ' b=' + assigned.b.join(',') + ' read ' +
              seen.size);
  await a.consumer.disconnect();
  await b.consumer.disconnect();
}

async function resume() {
  const seen = new Set();
  const assigned = {};
  const c = member(seen, assigned, 'c');
  await c.start();
  await until(() => seen.size >= count, 120, () => 'read ' + seen.size);
  let old = 0;
  for (const v of seen) if (Number(v.slice(1)) < 100) ++old;
  console.log('OK resumed ' + seen.size + ' old ' + old);
  await c.consumer.disconnect();
}

({ produce, pair, resume })[mode]().then(() => process.exit(0), (e) => fail(e.stack || e));
)JS";

std::string write_script(const test::temp_dir& dir) {
  const auto path = (dir.path() / "kafkajs_client.js").string();
  std::ofstream(path) << script;
  return path;
}

int run_client(const test::temp_dir& dir, const test::node_process& node,
               const std::string& mode, int count, std::string* out, std::string* err) {
  return test::run_to_end("/usr/bin/node",
                          {write_script(dir), kafkajs_dir, node.kafka_bootstrap(), "orders", mode,
                           std::to_string(count)},
                          dir.path(), out, err, 180s);
}

} // namespace

TEST_CASE("kafkajs produces idempotently, two group members share the partitions and a later "
          "member resumes from their commits",
          "[system][kafka]") {
  INFO("kafkajs is missing from " << kafkajs_dir << "/node_modules: run scripts/setup.sh");
  REQUIRE(std::filesystem::exists(std::filesystem::path(kafkajs_dir) / "node_modules" /
                                  "kafkajs" / "package.json"));
  test::temp_dir dir;
  test::node_process_options options;
  options.binary = CAPSTAN_BINARY;
  options.settings = "group.initial.rebalance.delay.ms = 0\n";
  test::node_process node{dir, 1, options};
  node.start();
  test::create_topic(node, dir, "orders", 4);

  std::string out, err;
  int rc = run_client(dir, node, "produce", 100, &out, &err);
  INFO(out << err);
  REQUIRE(rc == 0);
  REQUIRE(out.find("OK produced 100") != std::string::npos);

  rc = run_client(dir, node, "pair", 100, &out, &err);
  INFO(out << err);
  REQUIRE(rc == 0);
  CHECK(out.find("OK pair") != std::string::npos);

  // The idempotent producer stored each record once: the native consumer reads exactly 100.
  REQUIRE(test::run_cli(CAPSTAN_BINARY, dir, "",
                        {"consume", "orders", "--from-beginning", "--timeout-ms", "3000",
                         "--bootstrap", node.bootstrap()},
                        &out, &err) == 0);
  CHECK(test::lines_of(out).size() == 100);

  // 20 more; a new member of the group starts after the pair's commits and reads only those.
  std::string more;
  for (int i = 100; i < 120; ++i) more += "v" + std::to_string(i) + "\n";
  REQUIRE(test::run_cli(CAPSTAN_BINARY, dir, more,
                        {"produce", "orders", "--acks", "all", "--bootstrap", node.bootstrap()},
                        &out, &err) == 0);
  rc = run_client(dir, node, "resume", 20, &out, &err);
  INFO(out << err);
  REQUIRE(rc == 0);
  CHECK(out.find("OK resumed 20 old 0") != std::string::npos);
  node.stop();
}
