#include "runtime/batch/crc32c.hpp"

#include <random>
#include <string_view>

#include <catch2/catch.hpp>

using namespace capstan;

namespace {

bytes_view view_of(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

struct known_vector {
  bytes data;
  uint32_t crc;
};

std::vector<known_vector> known_vectors() {
  return {
      {bytes{}, 0x00000000},
      {bytes{'1', '2', '3', '4', '5', '6', '7', '8', '9'}, 0xE3069283},
      {bytes(32, 0x00), 0x8A9136AA},
      {bytes(32, 0xFF), 0x62A8AB43},
  };
}

} // namespace

TEST_CASE("crc32c matches the published CRC-32C check values", "[batch][crc32c]") {
  CHECK(crc32c(view_of("123456789")) == 0xE3069283u);
  for (const auto& v : known_vectors()) {
    CHECK(crc32c(v.data) == v.crc);
    CHECK(crc32c_extend_table(0, v.data) == v.crc);
  }
}

TEST_CASE("the SSE4.2 path matches the published check values", "[batch][crc32c]") {
  if (!crc32c_hardware_available()) {
    WARN("CPU without SSE4.2: hardware path not tested");
    return;
  }
  for (const auto& v : known_vectors()) CHECK(crc32c_extend_sse42(0, v.data) == v.crc);
}

TEST_CASE("crc32c_extend over any split equals the crc of the whole", "[batch][crc32c]") {
  const bytes_view all = view_of("The quick brown fox jumps over the lazy dog, twice over");
  const uint32_t whole = crc32c(all);
  for (size_t split = 0; split <= all.size(); ++split) {
    CHECK(crc32c_extend(crc32c(all.first(split)), all.subspan(split)) == whole);
    CHECK(crc32c_extend_table(crc32c_extend_table(0, all.first(split)), all.subspan(split)) ==
          whole);
  }
}

TEST_CASE("hardware and table crc agree on random buffers of every length and alignment",
          "[batch][crc32c]") {
  if (!crc32c_hardware_available()) {
    WARN("CPU without SSE4.2: hardware path not tested");
    return;
  }
  std::mt19937_64 rng(42);
  bytes buffer(4096 + 16);
  for (auto& b : buffer) b = static_cast<uint8_t>(rng());
  for (size_t align = 0; align < 8; ++align) {
    for (size_t len = 0; len <= 300; ++len) {
      const bytes_view data(buffer.data() + align, len);
      const auto seed = static_cast<uint32_t>(rng());
      REQUIRE(crc32c_extend_sse42(seed, data) == crc32c_extend_table(seed, data));
    }
    for (size_t len : {1023u, 1024u, 1025u, 4095u, 4096u}) {
      const bytes_view data(buffer.data() + align, len);
      REQUIRE(crc32c_extend_sse42(0, data) == crc32c_extend_table(0, data));
    }
  }
}
