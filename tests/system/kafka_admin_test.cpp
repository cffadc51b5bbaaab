// Topic administration through the Kafka listener with a client no one here wrote: kafka-python
// (Debian python3-kafka) creates a topic, describes its configs, adds partitions, produces with
// acks=all, asks where the leader epoch ends (OffsetForLeaderEpoch, by hand), reads everything
// back in a consumer group and deletes the topic, and describes a broker's configs, against a
// real `capstan node` (docs/kafka.md).

#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "tests/support/child_process.hpp"
#include "tests/support/node_process.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace std::chrono_literals;

namespace {

// BROKER TOPIC GROUP. Prints "OK ..." after each step that held and exits 0 when all did;
// every wait is bounded.
constexpr const char* script = R"PY(
import socket, struct, sys, time
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, NewPartitions, NewTopic

broker, topic, group = sys.argv[1:4]

def fail(why):
    sys.exit('FAIL ' + why)

def wait_for(check, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if check():
            return True
        time.sleep(0.2)
    return False

def epoch_end(partition, current, requested):
    # kafka-python 2.0.2 has no OffsetForLeaderEpoch: v2 by hand, one partition.
    name = topic.encode()
    body = struct.pack('>ih', 1, len(name)) + name + struct.pack('>iiii', 1, partition, current,
                                                                requested)
    header = struct.pack('>hhih', 23, 2, 7, 6) + b'py-ofl'
    with socket.create_connection((broker.split(':')[0], int(broker.split(':')[1])), 30) as s:
        s.settimeout(30)
        s.sendall(struct.pack('>i', len(header) + len(body)) + header + body)
        data = b''
        while len(data) < 4 or len(data) < 4 + struct.unpack('>i', data[:4])[0]:
            chunk = s.recv(65536)
            if not chunk:
                fail('OffsetForLeaderEpoch: connection closed')
            data += chunk
    at = 4 + 4 + 4 + 4  # size, correlation id, throttle time, topic count
    at += 2 + struct.unpack('>h', data[at:at + 2])[0] + 4  # topic name, partition count
    return struct.unpack('>hiiq', data[at:at + 18])  # error, partition, epoch, end offset

admin = KafkaAdminClient(bootstrap_servers=broker, client_id='py-admin')
created = admin.create_topics([NewTopic(topic, num_partitions=3, replication_factor=1,
                                        topic_configs={'retention.ms': '3600000'})])
for name, code in [(t[0], t[1]) for t in created.topic_errors]:
    if code != 0:
        fail('create %s: %d' % (name, code))
print('OK created %s' % topic)

described = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
resource = described[0].resources[0]
if resource[0] != 0:
    fail('describe: %s' % (resource,))
configs = {c[0]: c[1] for c in resource[4]}
if configs.get('retention.ms') != '3600000':
    fail('retention.ms is %s' % configs.get('retention.ms'))
print('OK described retention.ms=%s' % configs['retention.ms'])

grown = admin.create_partitions({topic: NewPartitions(total_count=5)})
for t in grown.topic_errors:
    if t[1] != 0:
        fail('create_partitions: %s' % (t,))
print('OK grown to 5')

producer = KafkaProducer(bootstrap_servers=broker, acks='all', retries=5)
if not wait_for(lambda: (producer.partitions_for(topic) or set()) == set(range(5)), 30):
    fail('partitions %s' % producer.partitions_for(topic))
sent = [producer.send(topic, key=b'k%d' % i, value=b'v%d' % i) for i in range(100)]
producer.flush(30)
where = {f.get(timeout=30).partition for f in sent}
producer.close()
print('OK produced 100 to partitions %s' % sorted(where))

# KIP-320. The leader's epoch is the first current epoch not answered FENCED_LEADER_EPOCH (74)
# (a newer one is UNKNOWN_LEADER_EPOCH, 75); that epoch ends at the log end.
epoch = next((e for e in range(100) if epoch_end(0, e, e)[0] != 74), None)
if epoch is None or epoch_end(0, epoch, epoch)[0] != 0:
    fail('no current leader epoch found: %s' % (epoch,))
if epoch_end(0, epoch + 1, epoch)[0] != 75:
    fail('a newer current epoch answered %d' % epoch_end(0, epoch + 1, epoch)[0])
probe = KafkaConsumer(bootstrap_servers=broker)
log_end = probe.end_offsets([TopicPartition(topic, 0)])[TopicPartition(topic, 0)]
probe.close()
for current in (-1, epoch):
    answered = epoch_end(0, current, epoch)
    if answered != (0, 0, epoch, log_end):
        fail('epoch %d answered %s, log end %d' % (epoch, answered, log_end))
end = log_end
print('OK epoch %d ends at %d' % (epoch, end))

consumer = KafkaConsumer(topic, bootstrap_servers=broker, group_id=group,
                         auto_offset_reset='earliest', enable_auto_commit=False)
seen = set()
deadline = time.time() + 90
while time.time() < deadline and len(seen) < 100:
    for records in consumer.poll(timeout_ms=500).values():
        seen.update(r.value for r in records)
consumer.commit()
consumer.close()
if seen != {b'v%d' % i for i in range(100)}:
    fail('consumed %d of 100' % len(seen))
print('OK consumed 100')

deleted = admin.delete_topics([topic])
for t in deleted.topic_error_codes:
    if t[1] != 0:
        fail('delete: %s' % (t,))
if not wait_for(lambda: topic not in admin.list_topics(), 30):
    fail('%s still listed' % topic)
admin.close()
print('OK deleted %s' % topic)
)PY";

// BROKER. Describes the configs of broker 1 (the node, started with num.partitions = 3 in its
// config file) with kafka-python's admin client, then asks node 1 by hand about broker
// resources it does not describe. Prints "OK ..." after each step that held.
constexpr const char* broker_configs_script = R"PY(
import sys, time
from kafka import KafkaAdminClient
from kafka.admin import ConfigResource, ConfigResourceType
from kafka.client_async import KafkaClient
from kafka.protocol.admin import DescribeConfigsRequest

broker = sys.argv[1]

def fail(why):
    sys.exit('FAIL ' + why)

admin = KafkaAdminClient(bootstrap_servers=broker, client_id='py-broker-configs')
described = admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, '1')])
error, message, kind, name, entries = described[0].resources[0][:5]
if error != 0 or kind != 4 or name != '1':
    fail('describe broker 1: %s' % (described[0].resources[0],))
# name, value, read_only, source, is_sensitive, synonyms
configs = {e[0]: e for e in entries}
for key, value, source in [('num.partitions', '3', 4), ('node.id', '1', 4),
                           ('min.insync.replicas', '1', 5),
                           ('log.retention.hours', '168', 5)]:
    if key not in configs or configs[key][1] != value or configs[key][3] != source:
        fail('%s: %s' % (key, configs.get(key)))
if 'queued.max.request.bytes.per.connection' not in configs:
    fail('queued.max.request.bytes.per.connection missing')
if any(not e[2] or e[4] for e in entries):
    fail('an entry not read-only or sensitive: %s' % [e for e in entries if not e[2] or e[4]])
print('OK broker 1 has %d configs, num.partitions=%s' % (len(configs),
                                                       configs['num.partitions'][1]))

narrowed = admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, '1',
    configs={'min.insync.replicas': None, 'no.such.key': None})])
keys = [e[0] for e in narrowed[0].resources[0][4]]
if keys != ['min.insync.replicas']:
    fail('narrowed to %s' % keys)
admin.close()
print('OK narrowed to min.insync.replicas')

# Resources kafka-python would not send to node 1 (another broker's id goes to that broker; an
# empty or non-numeric name is refused by the client): asked by hand.
client = KafkaClient(bootstrap_servers=broker, client_id='py-broker-configs-raw')
deadline = time.time() + 30
while not client.ready(1) and time.time() < deadline:
    client.poll(timeout_ms=100)
if not client.ready(1):
    fail('node 1 not ready in 30 s')

def ask(kind, name):
    future = client.send(1, DescribeConfigsRequest[2](resources=[(kind, name, None)],
                                                      include_synonyms=False))
    client.poll(future=future, timeout_ms=30000)
    if not future.is_done or future.failed():
        fail('no DescribeConfigs answer for (%d, %r)' % (kind, name))
    return future.value.resources[0]

for kind, name in [(4, '2'), (4, 'one'), (8, '1')]:
    answered = ask(kind, name)
    if answered[0] != 42 or not answered[1] or answered[4]:
        fail('(%d, %r) answered %s' % (kind, name, answered))
empty = ask(4, '')
if empty[0] != 0 or empty[4]:
    fail('empty name answered %s' % (empty,))
client.close()
print('OK other brokers, names and loggers refused')
)PY";

} // namespace

TEST_CASE("kafka-python describes a broker's configs by its id", "[system][kafka]") {
  test::temp_dir dir;
  INFO("python3 kafka (Debian package python3-kafka) is missing: run scripts/setup.sh");
  REQUIRE(test::python_module_present("kafka", dir.path()));
  test::node_process_options options;
  options.binary = CAPSTAN_BINARY;
  options.settings = "num.partitions = 3\n";
  test::node_process node{dir, 1, options};
  node.start();
  const auto path = (dir.path() / "broker_configs.py").string();
  std::ofstream(path) << broker_configs_script;
  const std::string broker = "127.0.0.1:" + std::to_string(node.kafka_port());
  std::string out, err;
  const int rc =
      test::run_to_end("/usr/bin/python3", {path, broker}, dir.path(), &out, &err, 120s);
  INFO(out << err);
  CHECK(rc == 0);
  CHECK(out.find("OK broker 1 has ") != std::string::npos);
  CHECK(out.find("OK narrowed to min.insync.replicas") != std::string::npos);
  CHECK(out.find("OK other brokers, names and loggers refused") != std::string::npos);
  node.stop();
}

TEST_CASE("kafka-python creates, describes, grows, uses and deletes a topic", "[system][kafka]") {
  test::temp_dir dir;
  // scripts/setup.sh installs it.
  INFO("python3 kafka (Debian package python3-kafka) is missing: run scripts/setup.sh");
  REQUIRE(test::python_module_present("kafka", dir.path()));
  test::node_process_options options;
  options.binary = CAPSTAN_BINARY;
  options.settings = "group.initial.rebalance.delay.ms = 0\n";
  test::node_process node{dir, 1, options};
  node.start();
  const auto path = (dir.path() / "admin.py").string();
  std::ofstream(path) << script;
  const std::string broker = "127.0.0.1:" + std::to_string(node.kafka_port());
  std::string out, err;
  const int rc = test::run_to_end("/usr/bin/python3", {path, broker, "admin-t", "admin-g"},
                                  dir.path(), &out, &err, 240s);
  INFO(out << err);
  CHECK(rc == 0);
  CHECK(out.find("OK described retention.ms=3600000") != std::string::npos);
  CHECK(out.find("OK consumed 100") != std::string::npos);
  CHECK(out.find("OK epoch ") != std::string::npos);
  CHECK(out.find("OK deleted admin-t") != std::string::npos);
  node.stop();
}
