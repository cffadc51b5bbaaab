#include "runtime/client/partitioner.hpp"

#include "runtime/client/producer.hpp"

namespace capstan::client {

// Kafka's Utils.murmur2: MurmurHash2, 32-bit, seed 0x9747b28c, little-endian blocks. Java ints
// wrap, so the arithmetic is done on uint32_t and the result reinterpreted.
int32_t murmur2(bytes_view data) {
  const uint32_t length = static_cast<uint32_t>(data.size());
  constexpr uint32_t seed = 0x9747b28c;
  constexpr uint32_t m = 0x5bd1e995;
  constexpr int r = 24;
  uint32_t h = seed ^ length;
  const uint32_t length4 = length / 4;
  for (uint32_t i = 0; i < length4; ++i) {
    const uint32_t i4 = i * 4;
    uint32_t k = uint32_t{data[i4]} | (uint32_t{data[i4 + 1]} << 8) | (uint32_t{data[i4 + 2]} << 16) |
                 (uint32_t{data[i4 + 3]} << 24);
    k *= m;
    k ^= k >> r;
    k *= m;
    h *= m;
    h ^= k;
  }
  const uint32_t tail = length & ~uint32_t{3};
  switch (length % 4) {
  case 3:
    h ^= uint32_t{data[tail + 2]} << 16;
    [[fallthrough]];
  case 2:
    h ^= uint32_t{data[tail + 1]} << 8;
    [[fallthrough]];
  case 1:
    h ^= uint32_t{data[tail]};
    h *= m;
  }
  h ^= h >> 13;
  h *= m;
  h ^= h >> 15;
  return static_cast<int32_t>(h);
}

int32_t partition_for_key(bytes_view key, int32_t partitions) {
  // Kafka's Utils.toPositive: clears the sign bit (not abs, which overflows on INT_MIN).
  const int32_t positive = murmur2(key) & 0x7fffffff;
  return positive % partitions;
}

sticky_partitioner::sticky_partitioner(uint64_t seed) : rng_(seed) {}

int32_t sticky_partitioner::partition(const std::string& topic, int32_t partitions) {
  auto it = sticky_.find(topic);
  if (it != sticky_.end() && it->second < partitions) return it->second;
  const auto chosen = static_cast<int32_t>(rng_() % static_cast<uint64_t>(partitions));
  sticky_[topic] = chosen;
  return chosen;
}

void sticky_partitioner::on_new_batch(const std::string& topic, int32_t partitions, int32_t previous) {
  auto it = sticky_.find(topic);
  if (it == sticky_.end() || it->second != previous) return;
  if (partitions <= 1) return;
  // Uniform over the other partitions.
  auto next = static_cast<int32_t>(rng_() % static_cast<uint64_t>(partitions - 1));
  if (next >= previous) ++next;
  it->second = next;
}

} // namespace capstan::client
