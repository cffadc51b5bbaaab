// librdkafka's idempotent producer (python3-confluent-kafka) across a leader failover on a cluster
// of three real `capstan node` processes, through their Kafka listeners (docs/kafka.md): the
// partition leader is killed with SIGKILL while the producer writes with acks=all; librdkafka
// finds the new leader through Metadata and sends its unacknowledged batches again with their
// sequence numbers. Every record is then stored exactly once, in the order it was produced.

#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/support/child_process.hpp"
#include "tests/support/node_cluster.hpp"

using namespace capstan;
using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

const std::string binary = CAPSTAN_BINARY;

// Arguments: BROKERS TOPIC COUNT. Produces "0".."COUNT-1" in order, ten every 50 ms, with
// enable.idempotence and acks=all; prints "acked N" to stderr every 250 acknowledgements, and
// "OK ..." to stdout and exits 0 when every record was acknowledged without an error.
constexpr const char* script = R"PY(
import sys, time
from confluent_kafka import Producer
brokers, topic, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
acked, errors = [], []
def done(err, msg):
    if err is not None:
        errors.append(str(err))
        return
    acked.append(int(msg.value()))
    if len(acked) % 250 == 0:
        print('acked %d' % len(acked), file=sys.stderr, flush=True)
p = Producer({'bootstrap.servers': brokers, 'enable.idempotence': True, 'acks': 'all',
              'linger.ms': 5, 'message.timeout.ms': 120000})
for i in range(count):
    while True:
        try:
            p.produce(topic, value=str(i).encode(), on_delivery=done)
            break
        except BufferError:
            p.poll(0.1)
    p.poll(0)
    if i % 10 == 9:
        time.sleep(0.05)
left = p.flush(150)
print('acked %d errors %d unsent %d %s' % (len(acked), len(errors), left, errors[:3]))
if errors or left or len(acked) != count:
    sys.exit(1)
print('OK')
)PY";

} // namespace

TEST_CASE("librdkafka's idempotent producer loses, repeats and reorders nothing when the "
          "partition leader is killed",
          "[system][kafka][failover]") {
  node_cluster c(binary, 0);
  INFO("python3 confluent_kafka (Debian package python3-confluent-kafka) is missing: "
       "run scripts/setup.sh");
  REQUIRE(python_module_present("confluent_kafka", c.dir.path()));
  c.create_topic("idem", 3, c.node(1));
  const int leader = c.await_full_isr("idem", c.node(1)).leader;
  REQUIRE(leader >= 1);

  const auto path = (c.dir.path() / "idempotent_producer.py").string();
  std::ofstream(path) << script;
  std::string brokers;
  for (auto& n : c.nodes) brokers += (brokers.empty() ? "" : ",") + n->kafka_bootstrap();
  constexpr int count = 3000;
  child_process producer("/usr/bin/python3", {path, brokers, "idem", std::to_string(count)},
                         c.dir.path(), "idempotent-producer");
  INFO("producer: " << producer.stdout_text() << producer.stderr_text());
  REQUIRE(producer.wait_for_stderr("acked 500", 60s));
  c.node(leader).kill();

  const auto rc = producer.wait(180s);
  INFO("producer: " << producer.stdout_text() << producer.stderr_text());
  REQUIRE(rc);
  CHECK(*rc == 0);
  CHECK(producer.stdout_text().find("OK") != std::string::npos);

  const int survivor = leader == 1 ? 2 : 1;
  const auto read = c.consume("idem", c.node(survivor), count);
  std::vector<std::string> want;
  for (int i = 0; i < count; ++i) want.push_back(std::to_string(i));
  CHECK(read.size() == want.size());
  CHECK(read == want);
}
