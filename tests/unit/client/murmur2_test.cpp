#include <catch2/catch.hpp>

#include <string_view>

#include "runtime/client/producer.hpp"

using namespace capstan;
using namespace capstan::client;

namespace {

bytes_view as_bytes(std::string_view s) {
  return bytes_view(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

} // namespace

TEST_CASE("murmur2 matches Kafka's Utils.murmur2 test vectors", "[client][murmur2]") {
  // org.apache.kafka.common.utils.UtilsTest#testMurmur2
  CHECK(murmur2(as_bytes("21")) == -973932308);
  CHECK(murmur2(as_bytes("foobar")) == -790332482);
  CHECK(murmur2(as_bytes("a-little-bit-long-string")) == -985981536);
  CHECK(murmur2(as_bytes("a-little-bit-longer-string")) == -1486304829);
  CHECK(murmur2(as_bytes("lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8")) == -58897971);
  CHECK(murmur2(as_bytes("abc")) == 479470107);
}

TEST_CASE("keyed partitioning is toPositive(murmur2(key)) modulo the partition count",
          "[client][partitioner]") {
  // toPositive(-973932308) = 1173551340; % 7 = 1173551340 - 7 * 167650191 = 3.
  CHECK(partition_for_key(as_bytes("21"), 7) == static_cast<int32_t>((-973932308 & 0x7fffffff) % 7));
  CHECK(partition_for_key(as_bytes("abc"), 10) == 479470107 % 10);
  for (int partitions : {1, 2, 3, 16, 10000}) {
    for (std::string_view key : {"", "a", "foobar", "order-42", "a-little-bit-longer-string"}) {
      const auto p = partition_for_key(as_bytes(key), partitions);
      CHECK(p >= 0);
      CHECK(p < partitions);
      CHECK(p == partition_for_key(as_bytes(key), partitions));
    }
  }
}
