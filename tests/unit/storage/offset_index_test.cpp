#include "runtime/storage/offset_index.hpp"

#include <catch2/catch.hpp>

#include "runtime/storage/file_handle.hpp"
#include "tests/support/temp_dir.hpp"

namespace capstan {
namespace {

bytes encode_all(const std::vector<offset_index_entry>& entries) {
  bytes out(entries.size() * offset_index::entry_size);
  for (size_t i = 0; i < entries.size(); ++i)
    offset_index::encode(entries[i], out.data() + i * offset_index::entry_size);
  return out;
}

} // namespace

TEST_CASE("offset index entries encode big-endian and decode back", "[storage][index]") {
  const std::vector<offset_index_entry> entries{{0, 0}, {5, 4096}, {70000, 1u << 30}};
  const bytes b = encode_all(entries);
  REQUIRE(b.size() == 24);
  CHECK(b[8] == 0);
  CHECK(b[11] == 5);
  CHECK(b[14] == 0x10);
  auto decoded = offset_index::decode(b, uint64_t{1} << 31);
  REQUIRE(decoded.ok());
  CHECK(*decoded == entries);
}

TEST_CASE("offset index decode rejects damaged content", "[storage][index]") {
  const uint64_t log_size = 1 << 20;
  SECTION("size not a multiple of the entry size") {
    bytes b = encode_all({{1, 8}});
    b.push_back(0);
    CHECK(offset_index::decode(b, log_size).code() == errc::corrupt_message);
  }
  SECTION("offsets not strictly increasing") {
    CHECK(offset_index::decode(encode_all({{4, 8}, {4, 16}}), log_size).code() ==
          errc::corrupt_message);
  }
  SECTION("positions not strictly increasing") {
    CHECK(offset_index::decode(encode_all({{1, 16}, {4, 16}}), log_size).code() ==
          errc::corrupt_message);
  }
  SECTION("position not aligned") {
    CHECK(offset_index::decode(encode_all({{1, 12}}), log_size).code() == errc::corrupt_message);
  }
  SECTION("position past the log") {
    CHECK(offset_index::decode(encode_all({{1, 1 << 20}}), log_size).code() ==
          errc::corrupt_message);
  }
  SECTION("empty content is a valid empty index") {
    auto d = offset_index::decode({}, 0);
    REQUIRE(d.ok());
    CHECK(d->empty());
  }
}

TEST_CASE("offset index floor finds the greatest entry at or below an offset", "[storage][index]") {
  test::temp_dir dir("offset-index");
  auto index = offset_index::open(dir / "a.index");
  REQUIRE(index.ok());
  CHECK_FALSE(index->floor(100).has_value());
  for (uint32_t i = 1; i <= 10; ++i) REQUIRE(index->append({i * 10, i * 4096}).ok());
  CHECK_FALSE(index->floor(9).has_value());
  CHECK(*index->floor(10) == offset_index_entry{10, 4096});
  CHECK(*index->floor(19) == offset_index_entry{10, 4096});
  CHECK(*index->floor(20) == offset_index_entry{20, 8192});
  CHECK(*index->floor(1000) == offset_index_entry{100, 40960});
  CHECK(index->count_below_position(4096) == 0);
  CHECK(index->count_below_position(4097) == 1);
  CHECK(index->count_below_position(1 << 30) == 10);
}

TEST_CASE("offset index persists buffered entries and truncates file and memory",
          "[storage][index]") {
  test::temp_dir dir("offset-index");
  const auto path = dir / "a.index";
  std::vector<offset_index_entry> expected;
  {
    auto index = offset_index::open(path);
    REQUIRE(index.ok());
    for (uint32_t i = 0; i < 200; ++i) {
      expected.push_back({i + 1, (i + 1) * 64});
      REQUIRE(index->append(expected.back()).ok());
    }
    // Whole write batches reached the file already; the rest waits for write_pending.
    CHECK(std::filesystem::file_size(path) ==
          (200 / offset_index::write_batch) * offset_index::write_batch * 8);
    REQUIRE(index->write_pending().ok());
    CHECK(std::filesystem::file_size(path) == 200 * 8);
    REQUIRE(index->truncate(150).ok());
    CHECK(std::filesystem::file_size(path) == 150 * 8);
    CHECK(index->entries().size() == 150);
    REQUIRE(index->append({1000, 100000}).ok());
    REQUIRE(index->sync().ok());
  }
  expected.resize(150);
  expected.push_back({1000, 100000});
  auto reopened = offset_index::open(path);
  REQUIRE(reopened.ok());
  REQUIRE(reopened->load(1 << 20).ok());
  CHECK(reopened->entries() == expected);
  // A log shorter than the index claims makes the file invalid; memory stays empty.
  CHECK(reopened->load(64 * 100).code() == errc::corrupt_message);
  CHECK(reopened->empty());
  reopened->reset();
  CHECK(std::filesystem::file_size(path) == 150 * 8 + 8);
  REQUIRE(reopened->append({3, 8}).ok());
  REQUIRE(reopened->write_pending().ok());
  CHECK(std::filesystem::file_size(path) == 8);
  REQUIRE(reopened->remove().ok());
  CHECK_FALSE(std::filesystem::exists(path));
}

} // namespace capstan
