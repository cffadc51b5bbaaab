// Crash and corruption tests for segment::open(open_recover): whatever the disk holds, recovery
// keeps exactly the longest valid prefix of batches and never serves a byte it has not validated.

#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>

#include <catch2/catch.hpp>

#include "runtime/batch/record_batch_builder.hpp"
#include "runtime/batch/record_batch_format.hpp"
#include "runtime/batch/record_batch_view.hpp"
#include "runtime/storage/segment.hpp"
#include "runtime/storage/storage_env.hpp"
#include "tests/support/sync_recorder.hpp"
#include "tests/support/temp_dir.hpp"

namespace capstan {
namespace {

namespace fs = std::filesystem;
namespace bf = batch_format;

constexpr offset segment_base{500};

bytes read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return bytes(std::istreambuf_iterator<char>(in), {});
}

// Replaces the file by a new one (unlink, create): shrinking a file with ftruncate or O_TRUNC
// waits for writeback on ext4, which would make the many trials below slow.
void write_file(const fs::path& p, bytes_view b) {
  fs::remove(p);
  std::ofstream out(p, std::ios::binary);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

struct stored_batch {
  offset base{0};
  offset last{0};
  uint64_t position = 0;
  uint64_t end = 0;
};

// A flushed segment of seven batches of different sizes, the last one large enough that
// cutting it at every byte exercises every header field and many records.
class crash_fixture {
public:
  crash_fixture() {
    options.index_interval_bytes = 64;
    auto seg = segment::open(source.path(), segment_base, segment_open_mode::create, options);
    REQUIRE(seg.ok());
    offset next = segment_base;
    for (int i = 0; i < 7; ++i) {
      record_batch_builder b(next, 1000 + 100 * i);
      const int records = i == 6 ? 12 : i + 1;
      for (int j = 0; j < records; ++j)
        b.add("k" + std::to_string(j), std::string(5 + 3 * i + j, 'x'), 1000 + 100 * i + j);
      const bytes data = b.build();
      const uint64_t position = bf::align_up((*seg)->size_bytes());
      REQUIRE((*seg)->append(data).ok());
      batches.push_back({next, next + (records - 1), position, position + data.size()});
      next = next + records;
    }
    REQUIRE((*seg)->flush().ok());
    seg->reset();
    const auto stem = source / segment::file_stem(segment_base);
    log = read_file(stem.string() + ".log");
    index = read_file(stem.string() + ".index");
    tindex = read_file(stem.string() + ".timeindex");
    REQUIRE(log.size() == batches.back().end);
    REQUIRE(batches.back().position > batches[5].end); // padding before the last batch
  }

  fs::path path(std::string_view ext) const {
    return work / (segment::file_stem(segment_base) + std::string(ext));
  }

  // Writes `content` as the log (with the original, now possibly wrong, indexes) and recovers.
  std::unique_ptr<segment> recover(bytes_view content) {
    write_file(path(".log"), content);
    write_file(path(".index"), index);
    write_file(path(".timeindex"), tindex);
    auto seg = segment::open(work.path(), segment_base, segment_open_mode::open_recover, options);
    INFO((seg.ok() ? std::string() : seg.err().to_string()));
    REQUIRE(seg.ok());
    return std::move(*seg);
  }

  // The segment holds exactly the first `kept` batches, every one of them valid, and nothing
  // past them; `damaged_size` is the size of the log before recovery.
  void check_prefix(const segment& seg, size_t kept, uint64_t damaged_size) {
    const uint64_t valid_end = kept == 0 ? 0 : batches[kept - 1].end;
    const offset next = kept == 0 ? segment_base : batches[kept - 1].last + 1;
    CHECK(seg.size_bytes() == valid_end);
    CHECK(fs::file_size(path(".log")) == valid_end);
    CHECK(seg.next_offset() == next);
    const auto& rec = seg.recovery();
    CHECK(rec.valid_bytes == valid_end);
    CHECK(rec.truncated_bytes == damaged_size - valid_end);
    CHECK(rec.index_rebuilt);
    if (rec.truncated_bytes > 0) {
      CHECK(rec.truncated_at == next);
      CHECK_FALSE(rec.reason.empty());
    }
    auto all = seg.read(segment_base, 1 << 20);
    REQUIRE(all.ok());
    std::vector<int64_t> bases;
    batch_sequence_reader r(all->bytes(), options.max_batch_bytes);
    for (;;) {
      auto b = r.next();
      REQUIRE(b.ok());
      if (!*b) break;
      bases.push_back((*b)->base_offset().value());
    }
    REQUIRE(bases.size() == kept);
    for (size_t i = 0; i < kept; ++i) CHECK(bases[i] == batches[i].base.value());
    for (offset o = segment_base; o < next; o = o + 3) {
      auto slice = seg.read(o, 1);
      REQUIRE(slice.ok());
      CHECK(slice->next_offset > o);
    }
    auto past = seg.read(next, 1 << 20);
    REQUIRE(past.ok());
    CHECK(past->empty());
  }

  test::temp_dir source{"segment-src"};
  test::temp_dir work{"segment-crash"};
  segment_options options;
  std::vector<stored_batch> batches;
  bytes log, index, tindex;
};

} // namespace

TEST_CASE("a recovered segment's first flush makes its directory entry durable too",
          "[storage][recovery]") {
  // A segment past the recovery point may have been created by a process that crashed before
  // its first flush: its data is found (page cache), its directory entry may not be durable.
  crash_fixture f;
  test::sync_recorder env;
  scoped_storage_env installed(env);
  auto seg = f.recover(f.log);
  REQUIRE(seg->flush().ok());
  CHECK(env.syncs_of(f.work.path()) == 1);
  REQUIRE(seg->flush().ok());
  CHECK(env.syncs_of(f.work.path()) == 1);
  seg.reset();

  // Below the recovery point the segment was flushed before: no directory sync.
  auto trusted =
      segment::open(f.work.path(), segment_base, segment_open_mode::open_trusted, f.options);
  REQUIRE(trusted.ok());
  REQUIRE((*trusted)->flush().ok());
  CHECK(env.syncs_of(f.work.path()) == 1);
}

TEST_CASE("recovery of an undamaged segment keeps everything and rebuilds identical indexes",
          "[storage][recovery]") {
  crash_fixture f;
  auto seg = f.recover(f.log);
  f.check_prefix(*seg, f.batches.size(), f.log.size());
  CHECK(seg->recovery().reason.empty());
  seg.reset();
  CHECK(read_file(f.path(".index")) == f.index);
  CHECK(read_file(f.path(".timeindex")) == f.tindex);
}

TEST_CASE("recovery truncates a torn tail at every byte position of the last batch",
          "[storage][recovery]") {
  crash_fixture f;
  const auto& previous = f.batches[f.batches.size() - 2];
  for (uint64_t cut = previous.end; cut < f.log.size(); ++cut) {
    INFO("cut at " << cut);
    auto seg = f.recover(bytes_view(f.log).first(cut));
    f.check_prefix(*seg, f.batches.size() - 1, cut);
    // The recovered segment appends the lost batch again and then holds all of it.
    const auto& last = f.batches.back();
    REQUIRE(seg->append(bytes_view(f.log).subspan(last.position)).ok());
    CHECK(seg->next_offset() == last.last + 1);
    CHECK(seg->size_bytes() == f.log.size());
  }
}

TEST_CASE("recovery never serves a last batch with a flipped byte", "[storage][recovery]") {
  crash_fixture f;
  const auto& last = f.batches.back();
  std::mt19937 rng(20240611);
  // Bytes 0-7 (base offset) and 12-15 (partition leader epoch) are outside the CRC, as in Kafka:
  // their damage is only detectable through offset order (see the next test).
  std::vector<uint64_t> covered;
  for (uint64_t p = last.position + 8; p < last.position + 12; ++p) covered.push_back(p);
  for (uint64_t p = last.position + 16; p < last.end; ++p) covered.push_back(p);
  for (int trial = 0; trial < 400; ++trial) {
    bytes damaged = f.log;
    const uint64_t at = covered[rng() % covered.size()];
    const auto flip = static_cast<uint8_t>(1 + rng() % 255);
    damaged[at] ^= flip;
    INFO("trial " << trial << ": byte " << at - last.position
                  << " of the last batch ^= " << int(flip));
    auto seg = f.recover(damaged);
    f.check_prefix(*seg, f.batches.size() - 1, damaged.size());
  }
}

TEST_CASE("recovery cuts every batch from a damaged one in the middle", "[storage][recovery]") {
  crash_fixture f;
  std::mt19937 rng(7);
  for (int trial = 0; trial < 100; ++trial) {
    const size_t victim = 1 + rng() % (f.batches.size() - 1);
    const auto& b = f.batches[victim];
    bytes damaged = f.log;
    damaged[b.position + 16 + rng() % (b.end - b.position - 16)] ^= 0x5a;
    INFO("trial " << trial << ": batch " << victim);
    auto seg = f.recover(damaged);
    f.check_prefix(*seg, victim, damaged.size());
  }
}

TEST_CASE("recovery treats offsets that do not increase as corruption", "[storage][recovery]") {
  crash_fixture f;
  SECTION("a batch overlapping the previous one") {
    bytes damaged = f.log;
    const auto& last = f.batches.back();
    bf::store_be<int64_t>(damaged.data() + last.position, f.batches[5].last.value());
    auto seg = f.recover(damaged);
    f.check_prefix(*seg, f.batches.size() - 1, damaged.size());
  }
  SECTION("a base offset so large that the last offset would overflow") {
    bytes damaged = f.log;
    const auto& last = f.batches.back();
    bf::store_be<int64_t>(damaged.data() + last.position, std::numeric_limits<int64_t>::max() - 1);
    auto seg = f.recover(damaged);
    f.check_prefix(*seg, f.batches.size() - 1, damaged.size());
  }
  SECTION("a base offset beyond the segment's 32-bit offset range") {
    bytes damaged = f.log;
    const auto& last = f.batches.back();
    bf::store_be<int64_t>(damaged.data() + last.position,
                          segment_base.value() + (int64_t{1} << 33));
    auto seg = f.recover(damaged);
    f.check_prefix(*seg, f.batches.size() - 1, damaged.size());
  }
  SECTION("a batch below the segment base") {
    bytes damaged = f.log;
    bf::store_be<int64_t>(damaged.data(), segment_base.value() - 1);
    auto seg = f.recover(damaged);
    f.check_prefix(*seg, 0, damaged.size());
  }
}

TEST_CASE("recovery treats non-zero padding as corruption", "[storage][recovery]") {
  crash_fixture f;
  size_t checked = 0;
  for (size_t k = 1; k < f.batches.size(); ++k) {
    const uint64_t gap_start = f.batches[k - 1].end;
    for (uint64_t p = gap_start; p < f.batches[k].position; ++p) {
      bytes damaged = f.log;
      damaged[p] = 0x01;
      INFO("batch " << k << ", padding byte " << p - gap_start);
      auto seg = f.recover(damaged);
      f.check_prefix(*seg, k, damaged.size());
      ++checked;
    }
  }
  CHECK(checked > 0);
}

TEST_CASE("recovery cuts garbage appended after the last valid batch", "[storage][recovery]") {
  crash_fixture f;
  std::mt19937 rng(99);
  std::vector<bytes> tails{bytes(1, 0), bytes(7, 0), bytes(8, 0), bytes(64, 0), bytes(3, 0xab)};
  bytes random_tail(300);
  for (auto& b : random_tail) b = static_cast<uint8_t>(rng());
  tails.push_back(random_tail);
  // The padding and the first 40 bytes of a real batch: a torn append.
  bytes torn(bf::align_up(f.log.size()) - f.log.size(), 0);
  torn.insert(torn.end(), f.log.begin(), f.log.begin() + 40);
  tails.push_back(torn);
  for (const auto& tail : tails) {
    INFO("tail of " << tail.size() << " bytes");
    bytes damaged = f.log;
    damaged.insert(damaged.end(), tail.begin(), tail.end());
    auto seg = f.recover(damaged);
    f.check_prefix(*seg, f.batches.size(), damaged.size());
  }
}

TEST_CASE("an empty log recovers to an empty segment", "[storage][recovery]") {
  crash_fixture f;
  auto seg = f.recover({});
  f.check_prefix(*seg, 0, 0);
  CHECK(seg->max_timestamp() == no_timestamp);
}

} // namespace capstan
