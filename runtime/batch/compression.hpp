#pragma once

// The codecs of a RecordBatch v2's records section (attributes bits 0-2), in the stream formats
// Kafka's clients write: gzip (RFC 1952), snappy (snappy-java's framed "xerial" stream, or one
// raw snappy block as librdkafka may send), lz4 (the LZ4 frame format) and zstd (a zstd frame).
// docs/formats.md, "Compression".

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "runtime/result.hpp"
#include "runtime/types.hpp"

namespace capstan {

enum class compression : uint8_t { none = 0, gzip = 1, snappy = 2, lz4 = 3, zstd = 4 };

// "none", "gzip", "snappy", "lz4", "zstd": the names of Kafka's compression.type.
std::string_view to_string(compression codec);
std::optional<compression> compression_from_name(std::string_view name);
// The codec that attributes bits 0-2 name, or nullopt for 5-7, which Kafka does not define.
std::optional<compression> compression_from_attributes(int16_t attributes);

// `in` compressed with `codec`, as Kafka's Java producer writes it.
bytes compress(compression codec, bytes_view in);

// `in` decompressed, at most `max_out` bytes of it. Errors: CORRUPT_MESSAGE when `in` is not
// a whole, valid stream of the codec (truncated, bad checksum, trailing bytes);
// MESSAGE_TOO_LARGE when the output would exceed `max_out`, found before more than `max_out`
// bytes are held, so a small batch that inflates to gigabytes (a decompression bomb) costs at
// most `max_out` bytes of memory. compression::none gives `in` back under the same limit.
result<bytes> decompress(compression codec, bytes_view in, size_t max_out);

} // namespace capstan
