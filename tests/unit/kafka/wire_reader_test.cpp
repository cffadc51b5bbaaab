// Kafka's primitive wire types: what wire_writer writes, wire_reader reads back; a reader never
// reads past its input, names the first failure and refuses lengths its input cannot hold.

#include <cstdint>
#include <limits>

#include <catch2/catch.hpp>

#include "runtime/kafka/wire_reader.hpp"
#include "runtime/kafka/wire_writer.hpp"

namespace capstan::kafka {

TEST_CASE("primitives round trip through writer and reader", "[kafka]") {
  bytes buf;
  wire_writer w(buf);
  w.write_int8(-5);
  w.write_int16(-300);
  w.write_int32(std::numeric_limits<int32_t>::min());
  w.write_int64(std::numeric_limits<int64_t>::max());
  w.write_uint16(65535);
  w.write_uint32(4000000000u);
  w.write_float64(-2.25);
  w.write_bool(true);
  w.write_unsigned_varint(300);
  w.write_varint(-64);
  w.write_varlong(std::numeric_limits<int64_t>::min());

  wire_reader r(buf);
  CHECK(r.read_int8() == -5);
  CHECK(r.read_int16() == -300);
  CHECK(r.read_int32() == std::numeric_limits<int32_t>::min());
  CHECK(r.read_int64() == std::numeric_limits<int64_t>::max());
  CHECK(r.read_uint16() == 65535);
  CHECK(r.read_uint32() == 4000000000u);
  CHECK(r.read_float64() == -2.25);
  CHECK(r.read_bool());
  CHECK(r.read_unsigned_varint() == 300);
  CHECK(r.read_varint() == -64);
  CHECK(r.read_varlong() == std::numeric_limits<int64_t>::min());
  CHECK(r.ok());
  CHECK(r.remaining() == 0);
}

TEST_CASE("integers are big-endian and varints as Kafka's ByteUtils writes them", "[kafka]") {
  bytes buf;
  wire_writer w(buf);
  w.write_int32(0x01020304);
  w.write_unsigned_varint(300); // 0b10_0101100: 0xac 0x02
  w.write_varint(-1);           // zigzag 1
  w.write_varint(1);            // zigzag 2
  CHECK(buf == bytes{0x01, 0x02, 0x03, 0x04, 0xac, 0x02, 0x01, 0x02});
}

TEST_CASE("a read past the end fails with CORRUPT_MESSAGE and the failure sticks", "[kafka]") {
  const bytes buf{0x00, 0x01, 0x02};
  wire_reader r(buf);
  CHECK(r.read_int16() == 1);
  CHECK(r.read_int32() == 0);
  REQUIRE_FALSE(r.ok());
  CHECK(r.err().code == errc::corrupt_message);
  CHECK(r.err().message.find("int") != std::string::npos);
  CHECK(r.read_int8() == 0);
  CHECK(r.remaining() == 0);
}

TEST_CASE("an unsigned varint of more than 5 bytes is refused", "[kafka]") {
  const bytes buf{0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
  wire_reader r(buf);
  (void)r.read_unsigned_varint();
  REQUIRE_FALSE(r.ok());
  CHECK(r.err().code == errc::corrupt_message);
}

TEST_CASE("lengths: -1 is null, other negatives and lengths past the end fail", "[kafka]") {
  SECTION("classic string null") {
    const bytes buf{0xff, 0xff};
    wire_reader r(buf);
    CHECK_FALSE(r.read_string_length(false, "s").has_value());
    CHECK(r.ok());
  }
  SECTION("compact null is 0, length n is n + 1") {
    const bytes buf{0x00, 0x03, 'a', 'b'};
    wire_reader r(buf);
    CHECK_FALSE(r.read_string_length(true, "s").has_value());
    CHECK(r.read_string_length(true, "s") == std::optional<size_t>(2));
    CHECK(r.ok());
  }
  SECTION("negative length other than -1") {
    const bytes buf{0xff, 0xfe};
    wire_reader r(buf);
    (void)r.read_string_length(false, "s");
    CHECK(r.err().code == errc::corrupt_message);
  }
  SECTION("a length longer than the input") {
    const bytes buf{0x00, 0x00, 0x00, 0x05, 'a'};
    wire_reader r(buf);
    CHECK_FALSE(r.read_bytes_length(false, "payload").has_value());
    CHECK(r.err().code == errc::corrupt_message);
    CHECK(r.err().message.find("payload") != std::string::npos);
  }
  SECTION("an array count of 2^31 - 1 in a 10-byte input") {
    const bytes buf{0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0};
    wire_reader r(buf);
    CHECK_FALSE(r.read_array_length(false, "Topics").has_value());
    CHECK(r.err().code == errc::corrupt_message);
  }
}

} // namespace capstan::kafka
