// Stored, padded batch sequences as the Kafka listener sends them: back to back, unchanged.

#include "actors/gateway/kafka/kafka_record_set.hpp"

#include <catch2/catch.hpp>

#include "runtime/batch/record_batch_format.hpp"

using namespace capstan;

namespace {

// A stand-in batch of `size` bytes (>= 12) whose batchLength says so, bytes filled with `fill`.
bytes batch_of(size_t size, uint8_t fill) {
  bytes b(size, fill);
  const auto length = static_cast<uint32_t>(size - batch_format::log_overhead);
  b[8] = static_cast<uint8_t>(length >> 24);
  b[9] = static_cast<uint8_t>(length >> 16);
  b[10] = static_cast<uint8_t>(length >> 8);
  b[11] = static_cast<uint8_t>(length);
  return b;
}

} // namespace

TEST_CASE("unpadded_batches drops the padding between stored batches and keeps every batch byte",
          "[gateway][kafka]") {
  const auto a = batch_of(70, 0xa1);
  const auto b = batch_of(64, 0xb2);
  const auto c = batch_of(77, 0xc3);
  bytes padded;
  bytes expected;
  for (const auto* x : {&a, &b, &c}) {
    padded.insert(padded.end(), x->begin(), x->end());
    padded.resize(batch_format::align_up(padded.size()), 0);
    expected.insert(expected.end(), x->begin(), x->end());
  }
  CHECK(unpadded_batches(padded) == expected);
  // The last batch may end the sequence without its padding.
  padded.resize(padded.size() - 3);
  CHECK(unpadded_batches(padded) == expected);
  CHECK(unpadded_batches(bytes{}).empty());
}

TEST_CASE("unpadded_batches stops at a batch that runs past the end", "[gateway][kafka]") {
  const auto a = batch_of(64, 0xa1);
  bytes padded = a;
  const auto cut = batch_of(100, 0xb2);
  padded.insert(padded.end(), cut.begin(), cut.begin() + 40);
  CHECK(unpadded_batches(padded) == a);
}

TEST_CASE("unpadded_batches keeps the whole batches that fit a budget, and the first one always "
          "when asked",
          "[gateway][kafka]") {
  const auto a = batch_of(70, 0xa1);
  const auto b = batch_of(64, 0xb2);
  bytes padded = a;
  padded.resize(batch_format::align_up(padded.size()), 0);
  padded.insert(padded.end(), b.begin(), b.end());
  bytes both = a;
  both.insert(both.end(), b.begin(), b.end());
  CHECK(unpadded_batches(padded, 134, false) == both);
  CHECK(unpadded_batches(padded, 133, false) == a);
  CHECK(unpadded_batches(padded, 69, false).empty());
  // A batch larger than the budget still goes first, so that a consumer gets past it.
  CHECK(unpadded_batches(padded, 10, true) == a);
  CHECK(unpadded_batches(padded, 0, true) == a);
}
