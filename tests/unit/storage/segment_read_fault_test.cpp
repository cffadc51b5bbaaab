// Reads of a segment through the storage env (runtime/storage/fault_injection_env.hpp): a sealed
// segment the env will not map answers from pread with the same bytes, a failed read is
// KAFKA_STORAGE_ERROR, and a bit flipped on the way from the disk reaches the reader as it came,
// where the batch's CRC-32C refuses it.

#include <cerrno>

#include <catch2/catch.hpp>

#include "runtime/batch/record_batch_format.hpp"
#include "runtime/batch/record_batch_view.hpp"
#include "runtime/storage/fault_injection_env.hpp"
#include "runtime/storage/segment.hpp"
#include "tests/support/log_builder.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace capstan::test;

namespace {

constexpr const char* log_file = "00000000000000000000.log";

// A segment at offset 0 holding `batches` batches of 3 records with 40-byte values.
std::unique_ptr<segment> filled(const std::filesystem::path& dir, int batches) {
  auto seg = segment::open(dir, offset{0}, segment_open_mode::create, {});
  REQUIRE(seg);
  for (int i = 0; i < batches; ++i) {
    auto b = make_batch(3, "b" + std::to_string(i), 1000 + i, 0, 40);
    set_base_offset(b, offset{3 * i});
    REQUIRE((*seg)->append(b));
  }
  return std::move(*seg);
}

bytes copy_of(const log_slice& s) {
  return bytes(s.data, s.data + s.size);
}

} // namespace

TEST_CASE("a sealed segment the env will not map answers reads and truncation by pread",
          "[storage][segment][env]") {
  temp_dir dir;
  temp_dir mapped_dir;
  fault_injection_env faults;
  scoped_storage_env installed(faults);
  auto mapped = filled(mapped_dir.path(), 6);
  REQUIRE(mapped->seal());
  faults.fail(dir.path().string(), storage_op::map, ENODEV);
  auto unmapped = filled(dir.path(), 6);
  REQUIRE(unmapped->seal());
  CHECK(unmapped->sealed());

  for (int64_t from = 0; from < 18; from += 2) {
    for (size_t max_bytes : {size_t{1}, size_t{300}, size_t{1} << 20}) {
      INFO("from " << from << ", max bytes " << max_bytes);
      auto a = mapped->read(offset{from}, max_bytes);
      auto b = unmapped->read(offset{from}, max_bytes);
      REQUIRE(a);
      REQUIRE(b);
      CHECK(b->first_offset == a->first_offset);
      CHECK(b->next_offset == a->next_offset);
      CHECK(copy_of(*b) == copy_of(*a));
      CHECK(reinterpret_cast<uintptr_t>(b->data) % batch_format::alignment == 0);
    }
  }
  CHECK(unmapped->offset_for_timestamp(1003).value() == offset{9});

  // A sealed truncation copies the kept prefix from the file rather than a mapping.
  REQUIRE(unmapped->truncate_to(offset{9}));
  CHECK_FALSE(unmapped->sealed());
  CHECK(unmapped->next_offset() == offset{9});
  auto kept = unmapped->read(offset{0}, 1 << 20);
  REQUIRE(kept);
  auto records = records_of(kept->bytes());
  REQUIRE(records.size() == 9);
  CHECK(records.back().value->rfind("b2-2.", 0) == 0);
}

TEST_CASE("a read the disk fails is KAFKA_STORAGE_ERROR, whether the segment is active or sealed",
          "[storage][segment][env]") {
  temp_dir dir;
  fault_injection_env faults;
  scoped_storage_env installed(faults);
  faults.fail(dir.path().string(), storage_op::map, ENODEV);
  auto seg = filled(dir.path(), 4);
  for (bool sealed : {false, true}) {
    INFO((sealed ? "sealed" : "active"));
    if (sealed) REQUIRE(seg->seal());
    faults.fail(log_file, storage_op::read, EIO);
    auto read = seg->read(offset{3}, 1 << 20);
    REQUIRE_FALSE(read);
    CHECK(read.code() == errc::kafka_storage_error);
    CHECK(read.err().message.find("Input/output error") != std::string::npos);
    auto lookup = seg->offset_for_timestamp(1002);
    REQUIRE_FALSE(lookup);
    CHECK(lookup.code() == errc::kafka_storage_error);
    faults.clear();
    faults.fail(dir.path().string(), storage_op::map, ENODEV);
    REQUIRE(seg->read(offset{3}, 1 << 20));
  }
}

TEST_CASE("a bit flipped on its way from the disk reaches the reader, and the CRC refuses it",
          "[storage][segment][env]") {
  temp_dir dir;
  fault_injection_env faults;
  scoped_storage_env installed(faults);
  auto seg = filled(dir.path(), 2);
  auto whole = seg->read(offset{0}, 1 << 20);
  REQUIRE(whole);
  const bytes stored = copy_of(*whole);
  // A byte inside the second batch's records: the framing stays intact, only the CRC can tell.
  const auto first_size = record_batch_view::frame_size(stored);
  REQUIRE(first_size);
  const size_t flipped = batch_format::align_up(*first_size) + batch_format::records_at + 20;
  faults.flip(log_file, flipped, 0x04);

  auto read = seg->read(offset{0}, 1 << 20);
  REQUIRE(read);
  bytes expected = stored;
  expected[flipped] ^= 0x04;
  CHECK(copy_of(*read) == expected);
  batch_sequence_reader reader(read->bytes(), batch_format::default_max_batch_bytes);
  auto first = reader.next();
  REQUIRE(first);
  REQUIRE(*first);
  auto bad = reader.next();
  REQUIRE_FALSE(bad);
  CHECK(bad.code() == errc::corrupt_message);
  CHECK(bad.err().message.find("CRC-32C mismatch") != std::string::npos);

  faults.clear();
  auto again = seg->read(offset{0}, 1 << 20);
  REQUIRE(again);
  CHECK(copy_of(*again) == stored);
}
