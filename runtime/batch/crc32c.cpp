#include "runtime/batch/crc32c.hpp"

#include <array>

namespace capstan {

namespace {

constexpr uint32_t castagnoli = 0x82F63B78;

// tables[0] is the byte-at-a-time table; tables[k][b] is the CRC contribution of byte b followed
// by k zero bytes, so eight bytes fold in with eight independent lookups (slicing-by-8).
using crc_tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr crc_tables make_tables() {
  crc_tables t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int bit = 0; bit < 8; ++bit) c = (c & 1) ? (c >> 1) ^ castagnoli : c >> 1;
    t[0][i] = c;
  }
  for (size_t k = 1; k < 8; ++k)
    for (size_t i = 0; i < 256; ++i) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xff];
  return t;
}

constexpr crc_tables tables = make_tables();

uint32_t load_le32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

using crc_fn = uint32_t (*)(uint32_t, bytes_view);

crc_fn choose_implementation() {
  return crc32c_hardware_available() ? crc32c_extend_sse42 : crc32c_extend_table;
}

} // namespace

uint32_t crc32c_extend_table(uint32_t crc, bytes_view data) {
  uint32_t l = ~crc;
  const uint8_t* p = data.data();
  size_t n = data.size();
  while (n >= 8) {
    uint32_t lo = load_le32(p) ^ l;
    uint32_t hi = load_le32(p + 4);
    l = tables[7][lo & 0xff] ^ tables[6][(lo >> 8) & 0xff] ^ tables[5][(lo >> 16) & 0xff] ^
        tables[4][lo >> 24] ^ tables[3][hi & 0xff] ^ tables[2][(hi >> 8) & 0xff] ^
        tables[1][(hi >> 16) & 0xff] ^ tables[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  for (; n > 0; --n) l = tables[0][(l ^ *p++) & 0xff] ^ (l >> 8);
  return ~l;
}

bool crc32c_hardware_available() {
#if defined(__x86_64__) || defined(__i386__)
  // __builtin_cpu_init makes the check valid even before static constructors have run.
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2");
#else
  return false;
#endif
}

uint32_t crc32c_extend(uint32_t crc, bytes_view data) {
  static const crc_fn fn = choose_implementation();
  return fn(crc, data);
}

uint32_t crc32c(bytes_view data) { return crc32c_extend(0, data); }

} // namespace capstan
