// bench_failover_producer: the producer of tests/bench/failover.sh. Writes 16-byte records to
// one partition with acks=all, one record in flight (each send is flushed before the next), and
// prints on stdout, in wall-clock nanoseconds since the epoch (comparable with `date +%s%N`):
//   first ACK_NS OFFSET           the first acknowledgement
//   gap PREV_ACK_NS ACK_NS OFFSET an acknowledgement more than GAP_MS (default 200) after the
//                                 one before it: a failover happened between them
//   fail NS ERROR                 a record that failed after the client's retries (the next one
//                                 is sent at once)
//   ack ACK_NS OFFSET             every acknowledgement after the first, so a failover whose
//                                 pause stayed under GAP_MS can be timed too
// Runs until STOP_FILE exists. Run on demand (not a test):
//   BUILD/tests/bench_failover_producer BOOTSTRAP TOPIC PARTITION STOP_FILE [GAP_MS]

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/stat.h>

#include "runtime/client/cluster_client.hpp"
#include "runtime/client/producer.hpp"

using namespace capstan;

namespace {

int64_t wall_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool exists(const char* path) {
  struct stat st {};
  return ::stat(path, &st) == 0;
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s BOOTSTRAP TOPIC PARTITION STOP_FILE [GAP_MS]\n", argv[0]);
    return 2;
  }
  const std::string topic = argv[2];
  const int32_t partition = std::atoi(argv[3]);
  const char* stop_file = argv[4];
  const int64_t gap_ns = (argc > 5 ? std::atoll(argv[5]) : 200) * 1'000'000;

  client::client_config config;
  config.bootstrap = client::split_bootstrap(argv[1]);
  config.acks = -1;
  config.linger_ms = 0;
  config.max_in_flight = 1;
  auto client = client::cluster_client::connect(config);
  if (!client) {
    std::fprintf(stderr, "connect: %s\n", client.err().to_string().c_str());
    return 1;
  }
  client::producer producer(**client, config);
  const std::string value = "failover-bench..";
  const bytes_view payload(reinterpret_cast<const uint8_t*>(value.data()), value.size());
  int64_t last_ack = 0;
  while (!exists(stop_file)) {
    std::optional<result<client::record_metadata>> outcome;
    producer.send(topic, std::nullopt, payload, partition,
                  [&outcome](result<client::record_metadata> r) { outcome = std::move(r); });
    producer.flush(); // returns after the callback ran
    const int64_t now = wall_ns();
    if (!outcome || !*outcome) {
      std::printf("fail %lld %s\n", static_cast<long long>(now),
                  outcome ? outcome->err().to_string().c_str() : "no outcome");
    } else if (last_ack == 0) {
      std::printf("first %lld %lld\n", static_cast<long long>(now),
                  static_cast<long long>((*outcome)->off.value()));
      last_ack = now;
    } else {
      if (now - last_ack > gap_ns)
        std::printf("gap %lld %lld %lld\n", static_cast<long long>(last_ack),
                    static_cast<long long>(now), static_cast<long long>((*outcome)->off.value()));
      last_ack = now;
      std::printf("ack %lld %lld\n", static_cast<long long>(now),
                  static_cast<long long>((*outcome)->off.value()));
    }
    std::fflush(stdout);
  }
  return 0;
}
