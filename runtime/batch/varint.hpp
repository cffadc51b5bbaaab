#pragma once

// Zigzag varints as Kafka's ByteUtils writes and reads them (writeVarint / readVarint,
// writeVarlong / readVarlong): the signed value is zigzag-mapped (0, -1, 1, -2 ... -> 0, 1, 2,
// 3 ...) and then written 7 bits per byte, least significant group first, with the high bit set
// on every byte but the last. Record fields inside a RecordBatch v2 use them
// (docs/formats.md, "Record batch").

#include <cstddef>
#include <cstdint>

#include "runtime/types.hpp"

namespace capstan {

inline constexpr size_t max_varint_bytes = 5;
inline constexpr size_t max_varlong_bytes = 10;

constexpr uint32_t zigzag_encode(int32_t v) {
  return (static_cast<uint32_t>(v) << 1) ^ static_cast<uint32_t>(v >> 31);
}
constexpr uint64_t zigzag_encode(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
constexpr int32_t zigzag_decode(uint32_t u) {
  return static_cast<int32_t>((u >> 1) ^ (0u - (u & 1u)));
}
constexpr int64_t zigzag_decode(uint64_t u) {
  return static_cast<int64_t>((u >> 1) ^ (uint64_t{0} - (u & 1u)));
}

// Bytes the encoding of v takes: 1-5 for a varint, 1-10 for a varlong.
constexpr size_t varint_size(int32_t v) {
  uint32_t u = zigzag_encode(v);
  size_t n = 1;
  while (u >= 0x80) {
    u >>= 7;
    ++n;
  }
  return n;
}
constexpr size_t varlong_size(int64_t v) {
  uint64_t u = zigzag_encode(v);
  size_t n = 1;
  while (u >= 0x80) {
    u >>= 7;
    ++n;
  }
  return n;
}

// Writes v at out and returns the byte after it.
// REQUIRES: out has room for varint_size(v) (varlong_size(v)) bytes.
inline uint8_t* encode_varint(uint8_t* out, int32_t v) {
  uint32_t u = zigzag_encode(v);
  while (u >= 0x80) {
    *out++ = static_cast<uint8_t>(u | 0x80);
    u >>= 7;
  }
  *out++ = static_cast<uint8_t>(u);
  return out;
}
inline uint8_t* encode_varlong(uint8_t* out, int64_t v) {
  uint64_t u = zigzag_encode(v);
  while (u >= 0x80) {
    *out++ = static_cast<uint8_t>(u | 0x80);
    u >>= 7;
  }
  *out++ = static_cast<uint8_t>(u);
  return out;
}

// Decodes the varint at in[pos]. On success stores it in out, advances pos past it and returns
// true. Returns false, with pos and out unchanged, when the encoding runs past the end of `in`
// or has a continuation bit on its 5th (varlong: 10th) byte. Like Kafka's readVarint, bits of
// the last byte beyond 32 (64) are ignored. Reads nothing outside `in`.
inline bool decode_varint(bytes_view in, size_t& pos, int32_t& out) {
  uint32_t u = 0;
  size_t p = pos;
  for (unsigned shift = 0; shift < 35; shift += 7) {
    if (p >= in.size()) return false;
    uint8_t b = in[p++];
    u |= static_cast<uint32_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      out = zigzag_decode(u);
      pos = p;
      return true;
    }
  }
  return false;
}
inline bool decode_varlong(bytes_view in, size_t& pos, int64_t& out) {
  uint64_t u = 0;
  size_t p = pos;
  for (unsigned shift = 0; shift < 70; shift += 7) {
    if (p >= in.size()) return false;
    uint8_t b = in[p++];
    u |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      out = zigzag_decode(u);
      pos = p;
      return true;
    }
  }
  return false;
}

} // namespace capstan
