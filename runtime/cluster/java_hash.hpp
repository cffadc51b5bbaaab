#pragma once

// Java's arithmetic where Kafka's placement rules depend on it, so capstan places groups and
// partitions exactly as a Kafka broker would: String.hashCode (int arithmetic that wraps) and
// Kafka's Utils.abs.

#include <cstdint>
#include <limits>
#include <string_view>

namespace capstan {

// Java's String.hashCode. It runs over UTF-16 code units; over bytes it agrees for ASCII, which
// is all a topic name or group id of Kafka's character set holds.
constexpr int32_t java_string_hash(std::string_view s) {
  uint32_t h = 0;
  for (unsigned char c : s) h = 31u * h + c;
  return static_cast<int32_t>(h);
}

// Kafka's Utils.abs: Math.abs, except that MIN_VALUE (whose Math.abs stays negative) maps to 0.
constexpr int32_t kafka_abs(int32_t n) {
  if (n == std::numeric_limits<int32_t>::min()) return 0;
  return n < 0 ? -n : n;
}

// The replica fetcher (of `fetchers` per source node) that fetches `partition` of `topic`:
// Kafka's AbstractFetcherManager.getFetcherId, abs(31 * topic.hashCode + partition) % fetchers.
// REQUIRES: fetchers >= 1.
constexpr int32_t fetcher_index_for(std::string_view topic, int32_t partition, int32_t fetchers) {
  const uint32_t mixed = 31u * static_cast<uint32_t>(java_string_hash(topic)) +
                         static_cast<uint32_t>(partition);
  return kafka_abs(static_cast<int32_t>(mixed)) % fetchers;
}

} // namespace capstan
