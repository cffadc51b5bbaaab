#include "runtime/batch/compression.hpp"

#include <random>
#include <string>

#include <catch2/catch.hpp>

#include "runtime/batch/record_batch_format.hpp"

using namespace capstan;
namespace bf = capstan::batch_format;

namespace {

constexpr compression codecs[] = {compression::gzip, compression::snappy, compression::lz4,
                                  compression::zstd};

// Text that compresses (repeated words) with random bytes mixed in, larger than one snappy
// (32 KiB) and one lz4 (64 KiB) block.
bytes sample_input() {
  std::mt19937 rng(7);
  bytes out;
  while (out.size() < 200 * 1024) {
    for (char c : std::string("the quick brown fox ")) out.push_back(static_cast<uint8_t>(c));
    out.push_back(static_cast<uint8_t>(rng()));
  }
  return out;
}

} // namespace

TEST_CASE("every codec round trips, empty input included", "[batch][compression]") {
  const bytes input = sample_input();
  for (compression codec : codecs) {
    INFO(to_string(codec));
    const bytes packed = compress(codec, input);
    CHECK(packed.size() < input.size());
    auto back = decompress(codec, packed, input.size());
    REQUIRE(back.ok());
    CHECK(*back == input);
    auto empty = decompress(codec, compress(codec, bytes{}), 0);
    REQUIRE(empty.ok());
    CHECK(empty->empty());
  }
}

TEST_CASE("snappy is written in xerial framing and read framed or raw", "[batch][compression]") {
  const bytes input = sample_input();
  const bytes framed = compress(compression::snappy, input);
  // snappy-java's header: magic, version 1, compatible version 1.
  const bytes header{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1};
  REQUIRE(framed.size() > header.size());
  CHECK(bytes(framed.begin(), framed.begin() + 16) == header);
  // A single raw snappy block, as librdkafka may send: the first block of the framed stream
  // holds the first 32 KiB.
  const auto first_length = bf::load_be<uint32_t>(framed.data() + 16);
  const bytes raw(framed.begin() + 20, framed.begin() + 20 + first_length);
  auto back = decompress(compression::snappy, raw, input.size());
  REQUIRE(back.ok());
  CHECK(*back == bytes(input.begin(), input.begin() + 32 * 1024));
}

TEST_CASE("a damaged or truncated stream is CORRUPT_MESSAGE naming the codec",
          "[batch][compression]") {
  const bytes input = sample_input();
  for (compression codec : codecs) {
    INFO(to_string(codec));
    const bytes packed = compress(codec, input);
    for (size_t cut : {size_t{0}, size_t{1}, packed.size() / 2, packed.size() - 1}) {
      INFO("cut at " << cut);
      auto r = decompress(codec, bytes_view(packed).first(cut), input.size());
      REQUIRE_FALSE(r.ok());
      CHECK(r.err().code == errc::corrupt_message);
      CHECK_THAT(r.err().message, Catch::Contains(std::string(to_string(codec))));
    }
    bytes garbage(512, 0x5a);
    CHECK(decompress(codec, garbage, input.size()).code() == errc::corrupt_message);
    bytes trailing = packed;
    trailing.push_back(0x01);
    CHECK(decompress(codec, trailing, input.size()).code() == errc::corrupt_message);
  }
}

TEST_CASE("a stream that inflates past the limit is MESSAGE_TOO_LARGE", "[batch][compression]") {
  // 16 MiB of zeros compress to kilobytes: a small batch that would take 16 MiB to hold.
  const bytes zeros(16 << 20, 0);
  for (compression codec : codecs) {
    INFO(to_string(codec));
    const bytes bomb = compress(codec, zeros);
    CHECK(bomb.size() < (1u << 20));
    auto r = decompress(codec, bomb, 1 << 20);
    REQUIRE_FALSE(r.ok());
    CHECK(r.err().code == errc::message_too_large);
    CHECK_THAT(r.err().message, Catch::Contains("more than 1048576 bytes"));
    CHECK(decompress(codec, bomb, zeros.size()).ok()); // the exact size is within the limit
  }
}

TEST_CASE("codec names and attribute bits map both ways", "[batch][compression]") {
  for (compression codec : {compression::none, compression::gzip, compression::snappy,
                            compression::lz4, compression::zstd}) {
    CHECK(compression_from_name(to_string(codec)) == codec);
    CHECK(compression_from_attributes(static_cast<int16_t>(0x18 | static_cast<int>(codec))) ==
          codec);
  }
  CHECK_FALSE(compression_from_name("brotli").has_value());
  CHECK_FALSE(compression_from_attributes(5).has_value());
}
