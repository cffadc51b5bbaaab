#pragma once

// Kafka RecordBatch v2 byte layout: the constants. The format is described in prose in
// docs/formats.md ("Record batch"); every multi-byte header field is big-endian.

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace capstan::batch_format {

inline constexpr size_t base_offset_at = 0;            // int64
inline constexpr size_t batch_length_at = 8;           // int32: bytes after this field
inline constexpr size_t partition_leader_epoch_at = 12; // int32
inline constexpr size_t magic_at = 16;                 // int8, always 2
inline constexpr size_t crc_at = 17;                   // uint32, CRC-32C of [attributes_at, end)
inline constexpr size_t attributes_at = 21;            // int16
inline constexpr size_t last_offset_delta_at = 23;     // int32
inline constexpr size_t base_timestamp_at = 27;        // int64
inline constexpr size_t max_timestamp_at = 35;         // int64
inline constexpr size_t producer_id_at = 43;           // int64
inline constexpr size_t producer_epoch_at = 51;        // int16
inline constexpr size_t base_sequence_at = 53;         // int32
inline constexpr size_t records_count_at = 57;         // int32
inline constexpr size_t records_at = 61;               // varint-encoded records follow

inline constexpr size_t header_size = records_at;
// Bytes that precede batch_length's count: base offset + the length field itself.
inline constexpr size_t log_overhead = 12;

inline constexpr int8_t magic_v2 = 2;

// attributes bits
inline constexpr int16_t compression_mask = 0x07; // 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd
inline constexpr int16_t timestamp_type_mask = 0x08; // 1 = LogAppendTime
inline constexpr int16_t transactional_mask = 0x10;
inline constexpr int16_t control_mask = 0x20;

// Batches are stored and shipped 8-byte aligned: after each batch come 0-7 zero bytes so the next
// one starts at a multiple of 8 (see docs/formats.md, "Alignment"). This lets a read hand an
// mmap of a segment straight to Cap'n Proto's referenceExternalData.
inline constexpr size_t alignment = 8;
inline constexpr size_t align_up(size_t n) { return (n + alignment - 1) & ~(alignment - 1); }

// Kafka's message.max.bytes default (1 MiB + overhead).
inline constexpr size_t default_max_batch_bytes = 1048588;

// The most a compressed batch's records section may decompress to: Kafka's default
// socket.request.max.bytes (100 MiB), the most a producer could have sent uncompressed in one
// request. It bounds the memory one validation takes, whatever ratio the codec allows.
inline constexpr size_t max_decompressed_records_bytes = 100 * 1024 * 1024;

// Big-endian header field access. REQUIRES: p points at sizeof(T) readable (writable) bytes.
template <class T>
constexpr T load_be(const uint8_t* p) {
  static_assert(std::is_integral_v<T>);
  std::make_unsigned_t<T> v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v = static_cast<std::make_unsigned_t<T>>((v << 8) | p[i]);
  return static_cast<T>(v);
}

template <class T>
constexpr void store_be(uint8_t* p, T value) {
  static_assert(std::is_integral_v<T>);
  auto v = static_cast<std::make_unsigned_t<T>>(value);
  for (size_t i = sizeof(T); i-- > 0;) {
    p[i] = static_cast<uint8_t>(v & 0xff);
    v = static_cast<std::make_unsigned_t<T>>(v >> 8);
  }
}

} // namespace capstan::batch_format
