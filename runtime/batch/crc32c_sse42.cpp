// The SSE4.2 CRC-32C kernel. CMake compiles only this file with -msse4.2; crc32c.cpp calls it only
// after checking the CPU (crc32c_hardware_available), so nothing here runs on a CPU without it.

#include "runtime/batch/crc32c.hpp"

#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#if !defined(__SSE4_2__)
#error "crc32c_sse42.cpp must be compiled with -msse4.2 (see runtime/CMakeLists.txt)"
#endif
#include <nmmintrin.h>
#endif

namespace capstan {

#if defined(__x86_64__)

uint32_t crc32c_extend_sse42(uint32_t crc, bytes_view data) {
  const uint8_t* p = data.data();
  size_t n = data.size();
  uint64_t l = ~crc;
  auto word = [](const uint8_t* q) {
    uint64_t w;
    std::memcpy(&w, q, sizeof w);
    return w;
  };
  while (n >= 32) {
    l = _mm_crc32_u64(l, word(p));
    l = _mm_crc32_u64(l, word(p + 8));
    l = _mm_crc32_u64(l, word(p + 16));
    l = _mm_crc32_u64(l, word(p + 24));
    p += 32;
    n -= 32;
  }
  while (n >= 8) {
    l = _mm_crc32_u64(l, word(p));
    p += 8;
    n -= 8;
  }
  auto c = static_cast<uint32_t>(l);
  for (; n > 0; --n) c = _mm_crc32_u8(c, *p++);
  return ~c;
}

#else

// No 64-bit SSE4.2 kernel on this target; crc32c_hardware_available() is false on non-x86 and
// this keeps a 32-bit x86 build correct.
uint32_t crc32c_extend_sse42(uint32_t crc, bytes_view data) {
  return crc32c_extend_table(crc, data);
}

#endif

} // namespace capstan
