#pragma once

// What the libFuzzer targets in tests/fuzz share: a check that turns a broken invariant into a
// crash libFuzzer reports (and saves the input of), CRC repair so mutated batches get past the
// checksum to the code behind it, and a file-descriptor leak probe.

#include <cstddef>
#include <cstdint>
#include <span>

namespace capstan::fuzz {

// Prints `what` with its location and aborts: libFuzzer reports a deadly signal and writes the
// input to a crash-* file.
[[noreturn]] void fail(const char* what, const char* file, int line);

#define FUZZ_CHECK(cond)                                                                     \
  do {                                                                                       \
    if (!(cond)) ::capstan::fuzz::fail("FUZZ_CHECK(" #cond ") failed", __FILE__, __LINE__); \
  } while (false)

// For a status or result: fails with its error's text when it holds an error.
#define FUZZ_CHECK_OK(expr)                                                                \
  do {                                                                                     \
    if (auto fuzz_checked_ = (expr); !fuzz_checked_)                                       \
      ::capstan::fuzz::fail(("FUZZ_CHECK_OK(" #expr ") failed: " +                         \
                             fuzz_checked_.err().to_string()).c_str(),                     \
                            __FILE__, __LINE__);                                           \
  } while (false)

// Walks `sequence` as batch_sequence_reader frames it (a batch at every multiple of 8 from the
// start, after the previous batch's padding) and rewrites each complete batch's CRC-32C so it
// matches. Stops at the first frame that does not fit. Without this, almost every mutation of a
// batch fails the checksum and the code behind it is never reached.
void fix_batch_crcs(std::span<uint8_t> sequence);

// The lowest free file descriptor, as open(2) would pick it. A value that grows between two
// runs of a target means the code under test leaked a descriptor.
int lowest_free_fd();

} // namespace capstan::fuzz
