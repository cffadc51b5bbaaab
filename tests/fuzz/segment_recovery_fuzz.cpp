// libFuzzer target: segment and index recovery from arbitrary bytes
// (runtime/storage/log_loader.*, runtime/storage/segment.*). Each input becomes a partition
// directory of one to three segments (.log, .index, .timeindex; layout in segment_input.hpp) in
// a per-process temp dir, which load_log opens as a node does at start-up: segments below the
// recovery point trusted, the rest re-validated and cut. Then the loaded log must keep its
// promises: a recovered segment reads back as valid batches up to its next offset, timestamp
// lookups stay inside it, an append and a truncation after recovery read back as they should,
// and loading the directory again cuts and drops nothing (check_reload says when it may). No
// file descriptor may leak.
//
// Run: build-fuzz/tests/fuzz/segment_recovery_fuzz tests/fuzz/corpus/segment_recovery, or
// tests/fuzz/run.sh segment_recovery [seconds] (tests/fuzz/README.md).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include <spdlog/spdlog.h>

#include "runtime/batch/record_batch_builder.hpp"
#include "runtime/batch/record_batch_view.hpp"
#include "runtime/storage/log_loader.hpp"
#include "runtime/storage/segment.hpp"
#include "tests/fuzz/fuzz_support.hpp"
#include "tests/fuzz/segment_input.hpp"
#include "tests/support/temp_dir.hpp"

namespace capstan::fuzz {
namespace {

namespace fs = std::filesystem;

const fs::path& partition_dir() {
  // One directory per process, removed at exit (the static's destructor).
  static const test::temp_dir dir("capstan-fuzz-segment");
  return dir.path();
}

void write_file(const fs::path& path, const bytes& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(content.data()),
            static_cast<std::streamsize>(content.size()));
  FUZZ_CHECK(out.good());
}

void write_directory(const fs::path& dir, segment_input& in) {
  fs::remove_all(dir);
  fs::create_directory(dir);
  for (auto& s : in.segments) {
    if (in.fix_crcs) fix_batch_crcs(s.log);
    const auto stem = segment::file_stem(offset{s.base});
    write_file(dir / (stem + ".log"), s.log);
    if (!s.index.empty()) write_file(dir / (stem + ".index"), s.index);
    if (!s.time_index.empty()) write_file(dir / (stem + ".timeindex"), s.time_index);
  }
}

// Every batch of a recovered segment validates, and they end at its next offset.
void check_recovered(const segment& seg) {
  FUZZ_CHECK(seg.next_offset() >= seg.base_offset());
  auto slice = seg.read(seg.base_offset(), size_t{1} << 20);
  FUZZ_CHECK_OK(slice);
  if (seg.size_bytes() == 0) {
    FUZZ_CHECK(slice->empty() && seg.next_offset() == seg.base_offset());
    return;
  }
  FUZZ_CHECK(slice->size == seg.size_bytes());
  FUZZ_CHECK(slice->next_offset == seg.next_offset());
  batch_sequence_reader reader(slice->bytes(), segment_options{}.max_batch_bytes);
  std::optional<offset> last;
  for (;;) {
    auto b = reader.next();
    FUZZ_CHECK_OK(b);
    if (!*b) break;
    FUZZ_CHECK((*b)->base_offset() >= seg.base_offset());
    last = (*b)->last_offset();
  }
  FUZZ_CHECK(last && *last + 1 == seg.next_offset());

  // A read from any offset below the next one returns the first batch that ends at or after it
  // (which starts after it when compaction or a gap left no batch holding it).
  const int64_t middle = seg.base_offset().value() + (seg.next_offset() - seg.base_offset()) / 2;
  for (offset from : {seg.base_offset(), offset{middle}, seg.next_offset() - 1}) {
    auto r = seg.read(from, 1);
    FUZZ_CHECK(r && !r->empty());
    FUZZ_CHECK(r->first_offset >= seg.base_offset() && from < r->next_offset);
    auto first = record_batch_view::parse(r->bytes(), segment_options{}.max_batch_bytes);
    FUZZ_CHECK(first && first->last_offset() >= from);
  }
}

void look_up_timestamps(const segment& seg, bool recovered) {
  for (timestamp_ms t : {timestamp_ms{-1}, timestamp_ms{0}, timestamp_ms{1700000000000},
                         seg.max_timestamp()}) {
    auto found = seg.offset_for_timestamp(t);
    FUZZ_CHECK(found.ok());
    if (found && *found && recovered)
      FUZZ_CHECK(**found >= seg.base_offset() && **found < seg.next_offset());
  }
}

// Appends one batch at the log's end, as the partition log does after start-up.
void append_and_read_back(segment& last) {
  const offset at = last.next_offset();
  record_batch_builder builder(at, 1700000000000);
  builder.add("key", "value", 1700000000001);
  const bytes batch = builder.build();
  if (at.value() > std::numeric_limits<int64_t>::max() - 1 || !last.can_hold(at, batch.size()))
    return;
  FUZZ_CHECK_OK(last.append(batch));
  FUZZ_CHECK(last.next_offset() == at + 1);
  auto r = last.read(at, 1);
  FUZZ_CHECK(r && r->first_offset == at && r->size == batch.size());
  FUZZ_CHECK(std::equal(batch.begin(), batch.end(), r->data));
}

// Drops the upper half of the segment's offsets; what is left must still read back. A trusted
// segment was scanned only from its last index entries on, so damage before them may stop the
// truncation: CORRUPT_MESSAGE, with the segment still describing its file (its size, and offsets
// if it holds bytes).
void truncate_to_middle(const fs::path& dir, segment& seg, bool recovered) {
  const offset to = seg.base_offset() + (seg.next_offset() - seg.base_offset()) / 2;
  auto truncated = seg.truncate_to(to);
  if (!recovered && !truncated) {
    FUZZ_CHECK(truncated.code() == errc::corrupt_message);
    FUZZ_CHECK(fs::file_size(dir / (segment::file_stem(seg.base_offset()) + ".log")) ==
               seg.size_bytes());
    FUZZ_CHECK(seg.size_bytes() == 0 || seg.next_offset() > seg.base_offset());
    return;
  }
  FUZZ_CHECK_OK(truncated);
  FUZZ_CHECK(seg.next_offset() <= std::max(to, seg.base_offset()));
  if (recovered) check_recovered(seg);
}

struct load_summary {
  std::vector<std::pair<offset, offset>> ranges; // [base, next) per segment
  std::vector<size_t> sizes;
  bool dropped = false;           // the load deleted segments
  bool trusted_truncated = false; // a trusted segment was truncated afterwards
};

// Recovery is idempotent: what one load kept (and appended), the next keeps as it is. Two things
// void that, as a trusted segment is checked only from its last index entries on. Deleted
// segments: a trusted segment may have become the last one, which is always re-validated (and
// may be cut, as its CRCs were never checked). A truncated trusted segment: its tail is now
// where the first open never looked, and damage there makes the next open CORRUPT_MESSAGE (the
// partition then stays offline).
void check_reload(const result<loaded_log>& again, const load_summary& first) {
  if (first.trusted_truncated && !again) {
    FUZZ_CHECK(again.code() == errc::corrupt_message);
    return;
  }
  FUZZ_CHECK_OK(again);
  FUZZ_CHECK(again->dropped_segments.empty());
  if (first.dropped || first.trusted_truncated) return;
  FUZZ_CHECK(again->segments.size() == first.ranges.size());
  for (size_t i = 0; i < again->segments.size(); ++i) {
    const segment& seg = *again->segments[i];
    FUZZ_CHECK(seg.recovery().truncated_bytes == 0);
    FUZZ_CHECK(seg.base_offset() == first.ranges[i].first);
    FUZZ_CHECK(seg.next_offset() == first.ranges[i].second);
    FUZZ_CHECK(seg.size_bytes() == first.sizes[i]);
  }
}

} // namespace
} // namespace capstan::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Recovery logs every cut: noise at thousands of runs a second, but what explains a crash when
  // one input is replayed with CAPSTAN_FUZZ_LOG=1.
  if (std::getenv("CAPSTAN_FUZZ_LOG") == nullptr) spdlog::set_level(spdlog::level::off);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace capstan;
  using namespace capstan::fuzz;

  auto in = decode_segment_input({data, size});
  const fs::path& dir = partition_dir();
  write_directory(dir, in);
  int64_t max_base = 0;
  for (const auto& s : in.segments) max_base = std::max(max_base, s.base);
  const offset recovery_point{in.trust_below_last ? max_base : 0};
  segment_options options;
  options.index_interval_bytes = in.index_interval_bytes;

  const int free_fd = lowest_free_fd();
  load_summary first;
  {
    auto loaded = load_log(dir, recovery_point, offset{0}, options, "fuzz");
    if (!loaded) {
      FUZZ_CHECK(loaded.code() == errc::corrupt_message);
      FUZZ_CHECK(lowest_free_fd() == free_fd);
      return 0;
    }
    auto& segments = loaded->segments;
    FUZZ_CHECK(!segments.empty());
    FUZZ_CHECK(loaded->unknown_files.empty());
    // Which segments load_log re-validated: with the trust flag only the one at the highest
    // base (the recovery point), otherwise all.
    auto recovered = [&](const segment& seg) {
      return !in.trust_below_last || seg.base_offset().value() == max_base;
    };
    for (size_t i = 0; i < segments.size(); ++i) {
      segment& seg = *segments[i];
      if (i + 1 < segments.size()) {
        FUZZ_CHECK(seg.next_offset() <= segments[i + 1]->base_offset());
        // As the partition log does after loading: reads of all but the last come from an mmap.
        FUZZ_CHECK_OK(seg.seal());
      }
      if (recovered(seg)) check_recovered(seg);
      else (void)seg.read(seg.base_offset(), size_t{1} << 20);
      look_up_timestamps(seg, recovered(seg));
    }
    append_and_read_back(*segments.back());
    // A follower's truncation, of the active segment and of a sealed one (which is rewritten).
    truncate_to_middle(dir, *segments.back(), recovered(*segments.back()));
    if (segments.size() > 1)
      truncate_to_middle(dir, *segments.front(), recovered(*segments.front()));
    for (const auto& seg : {segments.front(), segments.back()})
      first.trusted_truncated = first.trusted_truncated || !recovered(*seg);
    first.dropped = !loaded->dropped_segments.empty();
    for (const auto& seg : segments) {
      first.ranges.emplace_back(seg->base_offset(), seg->next_offset());
      first.sizes.push_back(seg->size_bytes());
    }
  }
  FUZZ_CHECK(lowest_free_fd() == free_fd);

  check_reload(load_log(dir, recovery_point, offset{0}, options, "fuzz"), first);
  FUZZ_CHECK(lowest_free_fd() == free_fd);
  return 0;
}
