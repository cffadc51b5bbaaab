// Kafka Fetch across several partitions against a real `capstan node` (docs/kafka.md, "Fetch"),
// with Fetch v4 requests that kafka-python's protocol classes write: a fetch whose MaxWaitMs is
// two minutes is answered as soon as one of its partitions has a record (at once when one has
// it already, or when one arrives while it waits), not when the others' waits run out; one whose
// wait runs out with nothing is answered empty on a connection that goes on; and the
// response's MaxBytes bounds the records across partitions, the first batch always going.

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

// Arguments: BROKER TOPIC CAPSTAN NATIVE_BOOTSTRAP. The topic has 2 partitions, empty. Every
// fetch waits up to 120 s on the broker's side and 60 s on this side, so an answer that only
// comes when MaxWaitMs ran out fails here. Prints "OK ..." after each step that held.
constexpr const char* script = R"PY(
import subprocess, sys, threading, time
from kafka.client_async import KafkaClient
from kafka.protocol.fetch import FetchRequest

broker, topic, capstan, native = sys.argv[1:5]

def fail(why):
    sys.exit('FAIL ' + why)

def produce(partition, value):
    subprocess.run([capstan, 'produce', topic, '--partition', str(partition), '--acks', 'all',
                    '--bootstrap', native], input=(value + '\n').encode(), check=True, timeout=60)

client = KafkaClient(bootstrap_servers=broker, client_id='py-fetch')
deadline = time.time() + 30
node = None
while node is None and time.time() < deadline:
    client.poll(future=client.cluster.request_update(), timeout_ms=1000)
    brokers = list(client.cluster.brokers())
    node = brokers[0].nodeId if brokers else None
if node is None:
    fail('no broker in the metadata')
while not client.ready(node) and time.time() < deadline:
    client.poll(timeout_ms=100)

def fetch(offsets, max_bytes=52428800, max_wait=120000):
    parts = [(p, offsets[p], 1048576) for p in sorted(offsets)]
    request = FetchRequest[4](-1, max_wait, 1, max_bytes, 0, [(topic, parts)])
    future = client.send(node, request)
    client.poll(future=future, timeout_ms=60000)
    if not future.is_done:
        fail('no fetch answer within 60 s')
    if future.failed():
        fail('fetch failed: %s' % future.exception)
    got = {}
    for name, partitions in future.value.topics:
        for p in partitions:
            partition, error, high_watermark, records = p[0], p[1], p[2], p[-1]
            if error != 0:
                fail('partition %d: error %d' % (partition, error))
            got[partition] = records
    return got

# Nothing anywhere and nothing arrives: answered empty once MaxWaitMs ran out, and the
# connection goes on.
got = fetch({0: 0, 1: 0}, max_wait=300)
if got[0] or got[1]:
    fail('empty fetch: %s' % got)
print('OK answered empty when nothing came')

# Partition 1 holds a record, partition 0 nothing: answered with it, not after 120 s.
produce(1, 'one')
got = fetch({0: 0, 1: 0})
if b'one' not in got[1] or got[0]:
    fail('first fetch: %s' % got)
print('OK answered with the partition that had a record')

# Nothing new anywhere: the fetch waits until a record arrives in either partition.
threading.Timer(1.0, produce, args=(0, 'zero')).start()
got = fetch({0: 0, 1: 1})
if b'zero' not in got[0]:
    fail('woken fetch: %s' % got)
print('OK woken by a record that arrived while it waited')

# Two more batches of ~2000 bytes in partition 0, one in partition 1: a response MaxBytes of
# 3000 takes partition 0's first one and nothing of partition 1; a MaxBytes of 1 the same (the
# first batch of a response goes whatever its size).
for p in (0, 0, 1):
    produce(p, 'x' * 2000)
got = fetch({0: 1, 1: 1}, max_bytes=3000)
if got[0].count(b'x' * 2000) != 1 or got[1]:
    fail('bounded fetch: partition 0 has %d big records, partition 1 %d bytes'
         % (got[0].count(b'x' * 2000), len(got[1])))
got = fetch({0: 1, 1: 1}, max_bytes=1)
if got[0].count(b'x' * 2000) != 1 or got[1]:
    fail('fetch of 1 byte: %s' % got)
got = fetch({0: 1, 1: 1})
if got[0].count(b'x' * 2000) != 2 or got[1].count(b'x' * 2000) != 1:
    fail('unbounded fetch: %s' % got)
print('OK MaxBytes bounds the response, the first batch always goes')
client.close()
)PY";

} // namespace

TEST_CASE("a Kafka fetch of several partitions is answered once one has records, within its "
          "MaxBytes",
          "[system][kafka]") {
  test::temp_dir dir;
  INFO("python3 kafka (Debian package python3-kafka) is missing: run scripts/setup.sh");
  REQUIRE(test::python_module_present("kafka", dir.path()));
  test::node_process_options options;
  options.binary = CAPSTAN_BINARY;
  test::node_process node{dir, 1, options};
  node.start();
  test::create_topic(node, dir, "waits", 2);
  const auto path = (dir.path() / "fetch.py").string();
  std::ofstream(path) << script;
  std::string out, err;
  const int rc = test::run_to_end("/usr/bin/python3",
                                  {path, node.kafka_bootstrap(), "waits", CAPSTAN_BINARY,
                                   node.bootstrap()},
                                  dir.path(), &out, &err, 240s);
  INFO(out << err);
  CHECK(rc == 0);
  CHECK(out.find("OK answered empty when nothing came") != std::string::npos);
  CHECK(out.find("OK answered with the partition that had a record") != std::string::npos);
  CHECK(out.find("OK woken by a record") != std::string::npos);
  CHECK(out.find("OK MaxBytes bounds the response") != std::string::npos);
  node.stop();
}
