// bench_group_commit: the latency of an offset commit at its group's coordinator, one in flight,
// through the client library as a consumer's commitSync sends it (one partition per commit,
// acks=-1 on __consumer_offsets). Prints p50/p99/max in microseconds and commits/s after WARMUP
// commits left out. Run on demand (not a test), e.g. by tests/bench/groups.sh:
//   BUILD/tests/bench_group_commit BOOTSTRAP GROUP COMMITS [WARMUP]

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "runtime/client/cluster_client.hpp"
#include "runtime/client/latency_histogram.hpp"

using namespace capstan;

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s BOOTSTRAP GROUP COMMITS [WARMUP]\n", argv[0]);
    return 2;
  }
  const std::string group = argv[2];
  const long commits = std::atol(argv[3]);
  const long warmup = argc > 4 ? std::atol(argv[4]) : 200;
  if (commits <= 0 || warmup < 0) {
    std::fprintf(stderr, "COMMITS must be > 0 and WARMUP >= 0\n");
    return 2;
  }
  client::client_config config;
  config.bootstrap = client::split_bootstrap(argv[1]);
  auto client = client::cluster_client::connect(config);
  if (!client) {
    std::fprintf(stderr, "connect: %s\n", client.err().to_string().c_str());
    return 1;
  }
  client::latency_histogram micros;
  using clock = std::chrono::steady_clock;
  clock::time_point measured_from;
  for (long i = 0; i < warmup + commits; ++i) {
    if (i == warmup) measured_from = clock::now();
    const auto start = clock::now();
    auto r = (*client)->commit_offsets(group, {client::committed_offset{"bench", 0, i, {}, errc::none, -1}}, {});
    if (!r || r->empty() || r->front().error != errc::none) {
      std::fprintf(stderr, "commit %ld failed: %s\n", i,
                   !r ? r.err().to_string().c_str() : r->empty() ? "no entry" : std::string(to_string(r->front().error)).c_str());
      return 1;
    }
    if (i >= warmup)
      micros.record(std::chrono::duration_cast<std::chrono::microseconds>(clock::now() - start).count());
  }
  const double seconds = std::chrono::duration<double>(clock::now() - measured_from).count();
  std::printf("%ld commits, one in flight: %.0f commits/s, latency p50 %lld us, p99 %lld us, max %lld us\n",
              commits, static_cast<double>(commits) / seconds, static_cast<long long>(micros.percentile(0.5)),
              static_cast<long long>(micros.percentile(0.99)), static_cast<long long>(micros.max()));
  return 0;
}
