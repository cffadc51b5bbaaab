#include "runtime/batch/varint.hpp"

#include <limits>
#include <random>

#include <catch2/catch.hpp>

using namespace capstan;

namespace {

bytes encode32(int32_t v) {
  bytes out(max_varint_bytes);
  out.resize(static_cast<size_t>(encode_varint(out.data(), v) - out.data()));
  return out;
}

bytes encode64(int64_t v) {
  bytes out(max_varlong_bytes);
  out.resize(static_cast<size_t>(encode_varlong(out.data(), v) - out.data()));
  return out;
}

} // namespace

TEST_CASE("varints encode as Kafka's ByteUtils.writeVarint", "[batch][varint]") {
  CHECK(encode32(0) == bytes{0x00});
  CHECK(encode32(-1) == bytes{0x01});
  CHECK(encode32(1) == bytes{0x02});
  CHECK(encode32(63) == bytes{0x7e});
  CHECK(encode32(-64) == bytes{0x7f});
  CHECK(encode32(64) == bytes{0x80, 0x01});
  CHECK(encode32(300) == bytes{0xd8, 0x04});
  CHECK(encode32(std::numeric_limits<int32_t>::max()) == bytes{0xfe, 0xff, 0xff, 0xff, 0x0f});
  CHECK(encode32(std::numeric_limits<int32_t>::min()) == bytes{0xff, 0xff, 0xff, 0xff, 0x0f});
  CHECK(encode64(std::numeric_limits<int64_t>::min()) ==
        bytes{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01});
  CHECK(encode64(-2) == bytes{0x03});
}

TEST_CASE("varints and varlongs round-trip and report their size", "[batch][varint]") {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    const auto v64 = static_cast<int64_t>(rng()) >> (rng() % 64);
    const auto v32 = static_cast<int32_t>(v64);
    const bytes e32 = encode32(v32);
    const bytes e64 = encode64(v64);
    REQUIRE(e32.size() == varint_size(v32));
    REQUIRE(e64.size() == varlong_size(v64));
    size_t pos = 0;
    int32_t d32 = 0;
    REQUIRE(decode_varint(e32, pos, d32));
    REQUIRE(d32 == v32);
    REQUIRE(pos == e32.size());
    pos = 0;
    int64_t d64 = 0;
    REQUIRE(decode_varlong(e64, pos, d64));
    REQUIRE(d64 == v64);
    REQUIRE(pos == e64.size());
  }
}

TEST_CASE("decoding a truncated varint fails without moving the cursor", "[batch][varint]") {
  const bytes e32 = encode32(std::numeric_limits<int32_t>::min());
  const bytes e64 = encode64(std::numeric_limits<int64_t>::max());
  for (size_t len = 0; len < e32.size(); ++len) {
    size_t pos = 0;
    int32_t v = 17;
    CHECK_FALSE(decode_varint(bytes_view(e32).first(len), pos, v));
    CHECK(pos == 0);
    CHECK(v == 17);
  }
  for (size_t len = 0; len < e64.size(); ++len) {
    size_t pos = 0;
    int64_t v = 17;
    CHECK_FALSE(decode_varlong(bytes_view(e64).first(len), pos, v));
    CHECK(pos == 0);
  }
}

TEST_CASE("a varint longer than 5 bytes or a varlong longer than 10 is rejected",
          "[batch][varint]") {
  const bytes six{0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
  size_t pos = 0;
  int32_t v32 = 0;
  CHECK_FALSE(decode_varint(six, pos, v32));
  const bytes eleven{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
  int64_t v64 = 0;
  CHECK_FALSE(decode_varlong(eleven, pos, v64));
  CHECK(pos == 0);
}

TEST_CASE("decoding starts at the cursor and stops after one varint", "[batch][varint]") {
  const bytes two{0xd8, 0x04, 0x01, 0xff};
  size_t pos = 0;
  int32_t v = 0;
  REQUIRE(decode_varint(two, pos, v));
  CHECK(v == 300);
  CHECK(pos == 2);
  REQUIRE(decode_varint(two, pos, v));
  CHECK(v == -1);
  CHECK(pos == 3);
  CHECK_FALSE(decode_varint(two, pos, v));
}
