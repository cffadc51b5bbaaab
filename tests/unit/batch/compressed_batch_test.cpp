// Compressed RecordBatch v2: built by record_batch_builder with each codec, validated by
// record_batch_view::parse in its decompressed records as an uncompressed batch is, kept as
// sent, and filtered by the log cleaner into a batch of the same codec.

#include <string>

#include <catch2/catch.hpp>

#include "runtime/batch/crc32c.hpp"
#include "runtime/batch/record_batch_builder.hpp"
#include "runtime/batch/record_batch_filter.hpp"
#include "runtime/batch/record_batch_format.hpp"
#include "runtime/batch/record_batch_view.hpp"

using namespace capstan;
namespace bf = capstan::batch_format;

namespace {

constexpr size_t max_bytes = bf::default_max_batch_bytes;
constexpr compression codecs[] = {compression::gzip, compression::snappy, compression::lz4,
                                  compression::zstd};

record_batch_builder sample_builder() {
  record_batch_builder builder(offset{0}, 1000);
  for (int i = 0; i < 50; ++i)
    builder.add("key-" + std::to_string(i), std::string(200, static_cast<char>('a' + i % 26)),
                1000 + i);
  return builder;
}

// The header of `batch` around a new records section: length and CRC fixed, everything else
// (count, last offset delta, attributes) as the caller leaves it.
bytes with_section(const bytes& batch, const bytes& section) {
  bytes out(batch.begin(), batch.begin() + bf::header_size);
  out.insert(out.end(), section.begin(), section.end());
  bf::store_be<int32_t>(out.data() + bf::batch_length_at,
                        static_cast<int32_t>(out.size() - bf::log_overhead));
  bf::store_be<uint32_t>(out.data() + bf::crc_at,
                         crc32c(bytes_view(out).subspan(bf::attributes_at)));
  return out;
}

void set_count(bytes& batch, int32_t count) {
  bf::store_be<int32_t>(batch.data() + bf::records_count_at, count);
  bf::store_be<int32_t>(batch.data() + bf::last_offset_delta_at, count - 1);
  bf::store_be<uint32_t>(batch.data() + bf::crc_at,
                         crc32c(bytes_view(batch).subspan(bf::attributes_at)));
}

} // namespace

TEST_CASE("a compressed batch validates in produce mode and reads back its records",
          "[batch][compression]") {
  const bytes plain = sample_builder().build();
  for (compression codec : codecs) {
    INFO(to_string(codec));
    auto builder = sample_builder();
    const bytes packed = builder.compress_with(codec).build();
    CHECK(packed.size() < plain.size());
    auto view = record_batch_view::parse(packed, max_bytes, batch_validation::produce);
    INFO((view.ok() ? std::string() : view.err().message));
    REQUIRE(view.ok());
    CHECK(view->codec() == codec);
    CHECK((view->attributes() & bf::compression_mask) == static_cast<int>(codec));
    CHECK(view->size_bytes() == packed.size()); // the batch as sent, not its decompressed form
    CHECK(view->records().size() == plain.size() - bf::header_size);
    int n = 0;
    view->for_each_record([&](const record_view& r) {
      CHECK(r.offset_delta == n);
      CHECK(std::string(r.key->begin(), r.key->end()) == "key-" + std::to_string(n));
      CHECK(view->timestamp_of(r) == 1000 + n);
      ++n;
    });
    CHECK(n == 50);
  }
}

TEST_CASE("a compressed batch whose count disagrees with its records is refused",
          "[batch][compression]") {
  for (compression codec : codecs) {
    INFO(to_string(codec));
    auto builder = sample_builder();
    const bytes packed = builder.compress_with(codec).build();
    bytes fewer = packed;
    set_count(fewer, 49);
    auto r = record_batch_view::parse(fewer, max_bytes, batch_validation::produce);
    REQUIRE_FALSE(r.ok());
    CHECK(r.err().code == errc::corrupt_message);
    CHECK_THAT(r.err().message, Catch::Contains("trailing bytes"));
    CHECK_THAT(r.err().message, Catch::Contains(std::string(to_string(codec)) + " records"));
    bytes more = packed;
    set_count(more, 51);
    auto m = record_batch_view::parse(more, max_bytes, batch_validation::produce);
    REQUIRE_FALSE(m.ok());
    CHECK(m.err().code == errc::corrupt_message);
    CHECK_THAT(m.err().message, Catch::Contains("after 50 of its 51 records"));
  }
}

TEST_CASE("a damaged compressed section is CORRUPT_MESSAGE even with a valid CRC",
          "[batch][compression]") {
  for (compression codec : codecs) {
    INFO(to_string(codec));
    auto builder = sample_builder();
    const bytes packed = builder.compress_with(codec).build();
    const bytes section(packed.begin() + bf::header_size, packed.end());
    const bytes cut = with_section(packed, bytes(section.begin(), section.end() - 3));
    auto r = record_batch_view::parse(cut, max_bytes, batch_validation::produce);
    REQUIRE_FALSE(r.ok());
    CHECK(r.err().code == errc::corrupt_message);
  }
}

TEST_CASE("a compressed batch that inflates past the limit is MESSAGE_TOO_LARGE",
          "[batch][compression]") {
  // One record whose value is zeros enough to pass the limit: zstd shrinks it to a few
  // kilobytes, far below max_batch_bytes.
  record_batch_builder builder(offset{0}, 1000);
  const bytes zeros(bf::max_decompressed_records_bytes + 1, 0);
  builder.add(std::nullopt, bytes_view(zeros), 1000);
  const bytes bomb = builder.compress_with(compression::zstd).build();
  REQUIRE(bomb.size() < max_bytes);
  auto r = record_batch_view::parse(bomb, max_bytes, batch_validation::produce);
  REQUIRE_FALSE(r.ok());
  CHECK(r.err().code == errc::message_too_large);
  CHECK_THAT(r.err().message, Catch::Contains("zstd records section decompresses to more than"));
}

TEST_CASE("filtering a compressed batch keeps its codec", "[batch][compression]") {
  for (compression codec : codecs) {
    INFO(to_string(codec));
    auto builder = sample_builder();
    const bytes packed = builder.compress_with(codec).build();
    auto view = record_batch_view::parse(packed, max_bytes);
    REQUIRE(view.ok());
    auto kept =
        filter_records(*view, [](const record_view& r, offset) { return r.offset_delta % 2 == 0; });
    REQUIRE(kept.has_value());
    auto filtered = record_batch_view::parse(*kept, max_bytes);
    INFO((filtered.ok() ? std::string() : filtered.err().message));
    REQUIRE(filtered.ok());
    CHECK(filtered->codec() == codec);
    CHECK(filtered->record_count() == 25);
    int32_t expected = 0;
    filtered->for_each_record([&](const record_view& r) {
      CHECK(r.offset_delta == expected);
      expected += 2;
    });
  }
}
