#pragma once

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of Kafka's RecordBatch v2.
// crc32c() picks the SSE4.2 instruction when the CPU has it (checked once, at first use) and a
// slicing-by-8 table otherwise; both give identical results.

#include <cstdint>

#include "runtime/types.hpp"

namespace capstan {

// CRC-32C of data, e.g. crc32c("123456789") == 0xE3069283.
uint32_t crc32c(bytes_view data);

// CRC-32C of A followed by data, given crc == crc32c(A). crc32c_extend(0, d) == crc32c(d).
uint32_t crc32c_extend(uint32_t crc, bytes_view data);

// The two implementations, callable directly for tests and tests/bench/bench_crc32c.
uint32_t crc32c_extend_table(uint32_t crc, bytes_view data);
// REQUIRES: crc32c_hardware_available().
uint32_t crc32c_extend_sse42(uint32_t crc, bytes_view data);
bool crc32c_hardware_available();

} // namespace capstan
