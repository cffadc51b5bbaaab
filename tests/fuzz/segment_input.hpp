#pragma once

// The input layout of segment_recovery_fuzz: a partition directory of one to three segments
// (their .log, .index and .timeindex bytes) packed into one byte string, so that libFuzzer's
// mutations reach each file. make_fuzz_corpus writes seeds in it from real segments.
//
//   u8  flags   bit 0: rewrite the CRC-32C of every batch framed in each .log first
//               bit 1: recovery point = the highest base offset (every other segment is then
//                      opened trusted, as below a node's recovery point); otherwise 0
//               bits 2-3: segment count - 1 (3 means 3)
//   u16 index interval bytes
//   per segment: u16 base offset delta (from the previous segment's base, or 0),
//                u16 .log length, u16 .index length, u16 .timeindex length, then those bytes.
// Integers are little-endian. Lengths are cut to what the input still holds. An index length of
// 0 means no index file (a missing index, as after a crash before its creation).

#include <cstdint>
#include <vector>

#include "runtime/types.hpp"

namespace capstan::fuzz {

struct segment_files {
  int64_t base = 0;
  bytes log;
  bytes index;
  bytes time_index;
};

struct segment_input {
  bool fix_crcs = false;
  bool trust_below_last = false;
  uint16_t index_interval_bytes = 4096;
  std::vector<segment_files> segments; // bases ascending (equal bases: the later one wins)
};

segment_input decode_segment_input(bytes_view in);

// REQUIRES: 1-3 segments with ascending bases less than 2^16 apart and files below 64 KiB.
bytes encode_segment_input(const segment_input& input);

} // namespace capstan::fuzz
