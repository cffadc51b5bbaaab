// libFuzzer target: the record batch validator (runtime/batch/record_batch_view.*) on arbitrary
// bytes, in both validation modes, and what the code that trusts a validated batch then does
// with it: for_each_record, the header accessors, and a leader's in-place header patches.
//
// Input: one flags byte, then a padded batch sequence (docs/formats.md, "Alignment").
//   bit 0     rewrite every framed batch's CRC-32C first (fuzz_support.hpp, fix_batch_crcs)
//   bits 1-2  max batch bytes: the default (1 MiB + 12), 100, 1000 or 10000
// Run: build-fuzz/tests/fuzz/record_batch_fuzz tests/fuzz/corpus/record_batch, or
// tests/fuzz/run.sh record_batch [seconds] (tests/fuzz/README.md).

#include <cstddef>
#include <cstdint>

#include "runtime/batch/record_batch_format.hpp"
#include "runtime/batch/record_batch_view.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace capstan::fuzz {
namespace {

constexpr size_t max_batch_limits[] = {batch_format::default_max_batch_bytes, 100, 1000, 10000};

// Folds every byte a record refers to, so ASan sees a read of each.
uint64_t touch(bytes_view b) {
  uint64_t sum = b.size();
  for (uint8_t x : b) sum = sum * 31 + x;
  return sum;
}

struct record_summary {
  int32_t count = 0;
  uint64_t digest = 0;
};

record_summary read_records(const record_batch_view& v, batch_validation mode) {
  record_summary s;
  int32_t previous = -1;
  v.for_each_record([&](const record_view& r) {
    if (mode == batch_validation::produce) FUZZ_CHECK(r.offset_delta == s.count);
    FUZZ_CHECK(r.offset_delta > previous && r.offset_delta <= v.last_offset_delta());
    previous = r.offset_delta;
    s.digest = s.digest * 7 + static_cast<uint64_t>(r.timestamp_delta) + r.attributes;
    if (r.key) s.digest += touch(*r.key);
    if (r.value) s.digest += touch(*r.value);
    for (const auto& h : r.headers) {
      s.digest += touch(h.key);
      if (h.value) s.digest += touch(*h.value);
    }
    ++s.count;
  });
  return s;
}

void check_batch(const record_batch_view& v, batch_validation mode, size_t max_batch) {
  FUZZ_CHECK(v.size_bytes() <= max_batch);
  FUZZ_CHECK(v.size_bytes() >= batch_format::header_size);
  const auto summary = read_records(v, mode);
  FUZZ_CHECK(summary.count == v.record_count());
  FUZZ_CHECK(v.last_offset() - v.base_offset() == v.last_offset_delta());
  (void)v.partition_leader_epoch();
  (void)v.base_timestamp();
  (void)v.producer_id();
  (void)v.producer_epoch();
  (void)v.base_sequence();
  (void)v.is_control();

  // A batch a producer may send is also one the log may hold.
  if (mode == batch_validation::produce)
    FUZZ_CHECK_OK(record_batch_view::parse(v.data(), max_batch, batch_validation::stored));

  // What a leader does before appending: the patched batch must still validate as the log holds
  // it, records intact.
  bytes copy(v.data().begin(), v.data().end());
  set_base_offset(copy, offset{v.base_offset() == offset{0x5a5a} ? 0x5a5b : 0x5a5a});
  set_partition_leader_epoch(copy, leader_epoch{7});
  set_log_append_time(copy, 1700000000000);
  auto patched = record_batch_view::parse(copy, max_batch, batch_validation::stored);
  FUZZ_CHECK_OK(patched);
  FUZZ_CHECK(patched->max_timestamp() == 1700000000000);
  FUZZ_CHECK(patched->partition_leader_epoch() == leader_epoch{7});
  const auto again = read_records(*patched, batch_validation::stored);
  FUZZ_CHECK(again.count == summary.count && again.digest == summary.digest);
}

} // namespace
} // namespace capstan::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace capstan;
  using namespace capstan::fuzz;
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  // An exact-size heap copy, so ASan flags any read past the input.
  bytes input(data + 1, data + size);
  if (flags & 1) fix_batch_crcs(input);
  const size_t max_batch = max_batch_limits[(flags >> 1) & 3];

  if (auto framed = record_batch_view::frame_size(input); framed)
    FUZZ_CHECK(*framed >= batch_format::header_size);

  for (auto mode : {batch_validation::produce, batch_validation::stored}) {
    batch_sequence_reader reader(input, max_batch, mode);
    for (;;) {
      auto next = reader.next();
      if (!next) {
        FUZZ_CHECK(next.code() != errc::none && !next.err().message.empty());
        FUZZ_CHECK(reader.position() <= input.size());
        break;
      }
      if (!*next) {
        FUZZ_CHECK(reader.position() == input.size());
        break;
      }
      const record_batch_view& v = **next;
      FUZZ_CHECK(v.data().data() >= input.data() &&
                 v.data().data() + v.size_bytes() <= input.data() + input.size());
      FUZZ_CHECK(reader.position() == static_cast<size_t>(v.data().data() - input.data()) +
                                          v.size_bytes());
      check_batch(v, mode, max_batch);
    }
  }
  return 0;
}
