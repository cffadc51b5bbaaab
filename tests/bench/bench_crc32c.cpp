// bench_crc32c: CRC-32C throughput of the SSE4.2 path and the slicing-by-8 table path on 1 MiB
// buffers, in GB/s. Run on demand (not a test):
//   cmake --build BUILD --target bench_crc32c && BUILD/tests/bench_crc32c [iterations]

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "runtime/batch/crc32c.hpp"

using namespace capstan;

namespace {

template <class Fn>
double gigabytes_per_second(Fn&& fn, bytes_view buffer, int iterations, uint32_t& sink) {
  sink ^= fn(sink, buffer); // warm-up: page in the buffer and the tables
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) sink = fn(sink, buffer);
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  return static_cast<double>(buffer.size()) * iterations / elapsed.count() / 1e9;
}

} // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 2000;
  bytes buffer(1 << 20);
  std::mt19937_64 rng(1);
  for (auto& b : buffer) b = static_cast<uint8_t>(rng());

  uint32_t sink = 0;
  const double table = gigabytes_per_second(crc32c_extend_table, buffer, iterations, sink);
  std::printf("table  : %6.2f GB/s\n", table);
  if (crc32c_hardware_available()) {
    const double hw = gigabytes_per_second(crc32c_extend_sse42, buffer, iterations, sink);
    std::printf("sse4.2 : %6.2f GB/s (%.1fx table)\n", hw, hw / table);
  } else {
    std::printf("sse4.2 : not available on this CPU\n");
  }
  std::printf("(checksum %08x)\n", sink);
  return 0;
}
