#include "runtime/storage/time_index.hpp"

#include <catch2/catch.hpp>

#include "tests/support/temp_dir.hpp"

namespace capstan {
namespace {

bytes encode_all(const std::vector<time_index_entry>& entries) {
  bytes out(entries.size() * time_index::entry_size);
  for (size_t i = 0; i < entries.size(); ++i)
    time_index::encode(entries[i], out.data() + i * time_index::entry_size);
  return out;
}

} // namespace

TEST_CASE("time index entries encode big-endian and decode back", "[storage][index]") {
  const std::vector<time_index_entry> entries{{1000, 0}, {1700000000000, 42}};
  const bytes b = encode_all(entries);
  REQUIRE(b.size() == 24);
  CHECK(b[6] == 0x03);
  CHECK(b[7] == 0xE8);
  CHECK(b[23] == 42);
  auto decoded = time_index::decode(b);
  REQUIRE(decoded.ok());
  CHECK(*decoded == entries);
}

TEST_CASE("time index decode rejects damaged content", "[storage][index]") {
  CHECK(time_index::decode(bytes(13)).code() == errc::corrupt_message);
  CHECK(time_index::decode(encode_all({{10, 1}, {10, 2}})).code() == errc::corrupt_message);
  CHECK(time_index::decode(encode_all({{10, 2}, {11, 2}})).code() == errc::corrupt_message);
  CHECK(time_index::decode(encode_all({{10, 2}, {9, 3}})).code() == errc::corrupt_message);
}

TEST_CASE("time index appends only growing timestamps and finds the floor entry",
          "[storage][index]") {
  test::temp_dir dir("time-index");
  auto index = time_index::open(dir / "a.timeindex");
  REQUIRE(index.ok());
  REQUIRE(index->maybe_append({no_timestamp, 0}).ok());
  CHECK(index->empty());
  REQUIRE(index->maybe_append({100, 0}).ok());
  REQUIRE(index->maybe_append({100, 5}).ok());
  REQUIRE(index->maybe_append({90, 7}).ok());
  REQUIRE(index->maybe_append({200, 10}).ok());
  REQUIRE(index->maybe_append({300, 10}).ok());
  REQUIRE(index->maybe_append({300, 20}).ok());
  REQUIRE(index->maybe_append({400, 30}).ok());
  CHECK(index->entries() ==
        std::vector<time_index_entry>{{100, 0}, {200, 10}, {300, 20}, {400, 30}});
  CHECK_FALSE(index->floor(99).has_value());
  CHECK(index->floor(100)->relative_offset == 0);
  CHECK(index->floor(299)->relative_offset == 10);
  CHECK(index->floor(399)->relative_offset == 20);
  CHECK(index->floor(10000)->relative_offset == 30);
  CHECK(index->count_below_offset(10) == 1);
  CHECK(index->count_below_offset(11) == 2);
  REQUIRE(index->truncate(2).ok());
  REQUIRE(index->sync().ok());

  auto reopened = time_index::open(dir / "a.timeindex");
  REQUIRE(reopened.ok());
  REQUIRE(reopened->load().ok());
  CHECK(reopened->entries() == std::vector<time_index_entry>{{100, 0}, {200, 10}});
}

} // namespace capstan
