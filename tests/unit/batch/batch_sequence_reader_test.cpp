#include <string>

#include <catch2/catch.hpp>

#include "runtime/batch/record_batch_builder.hpp"
#include "runtime/batch/record_batch_format.hpp"
#include "runtime/batch/record_batch_view.hpp"

using namespace capstan;
namespace bf = capstan::batch_format;

namespace {

constexpr size_t max_bytes = bf::default_max_batch_bytes;

bytes make_batch(int64_t base, int records, size_t value_size) {
  record_batch_builder builder(offset{base}, 0);
  for (int i = 0; i < records; ++i) builder.add("k", std::string(value_size, 'v'), i);
  return builder.build();
}

struct padded_sequence {
  bytes data;
  std::vector<size_t> starts; // where each batch starts
  std::vector<size_t> ends;   // where each batch ends (padding follows)
};

// Batches laid out as a segment holds them: each starts at a multiple of 8.
padded_sequence make_sequence(bool trailing_padding) {
  padded_sequence s;
  const bytes batches[] = {make_batch(0, 1, 3), make_batch(1, 3, 10), make_batch(4, 2, 1),
                           make_batch(6, 1, 8)};
  for (const auto& batch : batches) {
    s.data.resize(bf::align_up(s.data.size()), 0);
    s.starts.push_back(s.data.size());
    s.data.insert(s.data.end(), batch.begin(), batch.end());
    s.ends.push_back(s.data.size());
  }
  if (trailing_padding) s.data.resize(bf::align_up(s.data.size()), 0);
  return s;
}

} // namespace

TEST_CASE("the sequence reader yields every batch of a padded sequence at 8-byte positions",
          "[batch][sequence]") {
  for (bool trailing : {false, true}) {
    const padded_sequence s = make_sequence(trailing);
    batch_sequence_reader reader(s.data, max_bytes);
    std::vector<int64_t> bases;
    for (size_t i = 0;; ++i) {
      auto next = reader.next();
      REQUIRE(next.ok());
      if (!*next) break;
      REQUIRE(i < s.starts.size());
      CHECK(reinterpret_cast<uintptr_t>((*next)->data().data()) -
                reinterpret_cast<uintptr_t>(s.data.data()) ==
            s.starts[i]);
      CHECK(s.starts[i] % bf::alignment == 0);
      CHECK(reader.position() == s.ends[i]);
      bases.push_back((*next)->base_offset().value());
    }
    CHECK(bases == std::vector<int64_t>{0, 1, 4, 6});
    CHECK(reader.position() == s.data.size());
  }
}

TEST_CASE("an empty sequence ends at once", "[batch][sequence]") {
  batch_sequence_reader reader(bytes_view{}, max_bytes);
  auto next = reader.next();
  REQUIRE(next.ok());
  CHECK_FALSE(*next);
}

TEST_CASE("non-zero padding is corrupt and stops at the padding", "[batch][sequence]") {
  padded_sequence s = make_sequence(false);
  REQUIRE(s.ends[1] % bf::alignment != 0);
  s.data[s.ends[1]] = 0x01;
  batch_sequence_reader reader(s.data, max_bytes);
  REQUIRE(reader.next().ok());
  auto second = reader.next();
  REQUIRE(second.ok());
  REQUIRE(*second);
  auto third = reader.next();
  REQUIRE_FALSE(third.ok());
  CHECK(third.code() == errc::corrupt_message);
  CHECK_THAT(third.err().message, Catch::Contains("padding"));
  CHECK(reader.position() == s.ends[1]);
}

TEST_CASE("a sequence cut at every byte yields the whole batches then a clean end or "
          "CORRUPT_MESSAGE at the partial batch",
          "[batch][sequence]") {
  const padded_sequence s = make_sequence(true);
  for (size_t len = 0; len <= s.data.size(); ++len) {
    const bytes cut(s.data.begin(), s.data.begin() + static_cast<ptrdiff_t>(len));
    batch_sequence_reader reader(cut, max_bytes);
    size_t whole = 0;
    while (whole < s.ends.size() && s.ends[whole] <= len) ++whole;
    size_t seen = 0;
    for (;;) {
      auto next = reader.next();
      if (!next.ok()) {
        INFO("cut at " << len);
        CHECK(next.code() == errc::corrupt_message);
        REQUIRE(seen < s.starts.size());
        CHECK(reader.position() == s.starts[seen]);
        CHECK(len > s.starts[seen]);
        break;
      }
      if (!*next) {
        CHECK(reader.position() == len);
        break;
      }
      ++seen;
    }
    CHECK(seen == whole);
  }
}

TEST_CASE("a bad batch in the middle stops the scan at its start", "[batch][sequence]") {
  padded_sequence s = make_sequence(false);
  s.data[s.starts[2] + bf::records_at] ^= 0x40; // under the CRC
  batch_sequence_reader reader(s.data, max_bytes);
  REQUIRE(reader.next().ok());
  REQUIRE(reader.next().ok());
  auto bad = reader.next();
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.code() == errc::corrupt_message);
  CHECK_THAT(bad.err().message,
             Catch::Contains("batch at sequence position " + std::to_string(s.starts[2])));
  CHECK(reader.position() == s.starts[2]);
}

TEST_CASE("zeros after the last batch that run past its padding are a corrupt batch",
          "[batch][sequence]") {
  padded_sequence s = make_sequence(true);
  s.data.resize(s.data.size() + 64, 0);
  batch_sequence_reader reader(s.data, max_bytes);
  for (int i = 0; i < 4; ++i) REQUIRE(reader.next().ok());
  auto tail = reader.next();
  CHECK(tail.code() == errc::corrupt_message);
  CHECK(reader.position() == bf::align_up(s.ends.back()));
}
