#include "runtime/batch/compression.hpp"

#include <algorithm>
#include <array>
#include <cassert>
#include <cstring>
#include <memory>

#include <fmt/format.h>
#include <lz4frame.h>
#include <snappy.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "runtime/batch/record_batch_format.hpp"

namespace capstan {

namespace bf = batch_format;

namespace {

// snappy-java's stream header: magic, then format version and minimum compatible version (both
// 1), big-endian int32s; blocks follow, each an int32 length and one raw snappy block.
constexpr std::array<uint8_t, 8> xerial_magic = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};
constexpr size_t xerial_header_size = xerial_magic.size() + 8;
// snappy-java's default block size, which Kafka's producer keeps.
constexpr size_t xerial_block_size = 32 * 1024;

// zstd at level 3 (Kafka's and librdkafka's default) uses windows of at most 2^21 bytes; 2^24
// leaves room for other producers' settings while refusing a frame that asks the decoder for a
// window of up to 2 GiB (zstd's own default limit is 2^27).
constexpr int zstd_window_log_max = 24;

error corrupt(compression codec, std::string_view why) {
  return make_error(errc::corrupt_message,
                    fmt::format("{} records section does not decompress: {}", to_string(codec),
                                why));
}

error too_large(compression codec, size_t max_out) {
  return make_error(errc::message_too_large,
                    fmt::format("{} records section decompresses to more than {} bytes",
                                to_string(codec), max_out));
}

// The output of a streaming decoder, grown in steps and never beyond max_out + 1 bytes: a
// decoder that fills the last byte has proved the stream inflates past the limit.
class bounded_output {
public:
  bounded_output(size_t input_size, size_t max_out)
      : max_out_(max_out), step_(std::max<size_t>(input_size * 4, 64 * 1024)) {}

  // Room for the decoder to write into; empty only once more than max_out bytes were written.
  std::span<uint8_t> room() {
    if (produced_ == buf_.size() && !over()) {
      buf_.resize(std::min(buf_.size() + step_, max_out_ + 1));
      step_ *= 2;
    }
    return std::span<uint8_t>(buf_).subspan(produced_);
  }
  void wrote(size_t n) { produced_ += n; }
  bool over() const { return produced_ > max_out_; }
  bytes take() && {
    buf_.resize(produced_);
    return std::move(buf_);
  }

private:
  size_t max_out_;
  size_t step_;
  size_t produced_ = 0;
  bytes buf_;
};

result<bytes> gunzip(bytes_view in, size_t max_out) {
  z_stream s{};
  // 15 + 16: a gzip wrapper and the largest window, as Java's GZIPOutputStream writes.
  if (inflateInit2(&s, 15 + 16) != Z_OK) return corrupt(compression::gzip, "zlib init failed");
  std::unique_ptr<z_stream, int (*)(z_stream*)> end(&s, inflateEnd);
  s.next_in = const_cast<Bytef*>(in.data());
  s.avail_in = static_cast<uInt>(in.size());
  bounded_output out(in.size(), max_out);
  for (;;) {
    const auto room = out.room();
    if (out.over()) return too_large(compression::gzip, max_out);
    s.next_out = room.data();
    s.avail_out = static_cast<uInt>(room.size());
    const int rc = inflate(&s, Z_NO_FLUSH);
    out.wrote(room.size() - s.avail_out);
    if (out.over()) return too_large(compression::gzip, max_out);
    if (rc == Z_STREAM_END) {
      if (s.avail_in == 0) break;
      // Another gzip member follows, which Java's GZIPInputStream reads on as well.
      if (inflateReset(&s) != Z_OK) return corrupt(compression::gzip, "zlib reset failed");
      continue;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR)
      return corrupt(compression::gzip, s.msg != nullptr ? s.msg : "invalid deflate data");
    if (s.avail_in == 0 && s.avail_out != 0)
      return corrupt(compression::gzip, "the stream is truncated");
  }
  return std::move(out).take();
}

// One raw snappy block appended to `out`, which may hold at most max_out bytes.
status unsnappy_block(bytes_view block, bytes& out, size_t max_out) {
  const auto* p = reinterpret_cast<const char*>(block.data());
  size_t n = 0;
  if (!snappy::GetUncompressedLength(p, block.size(), &n))
    return corrupt(compression::snappy, "a block's length preamble is invalid");
  if (n > max_out - out.size()) return too_large(compression::snappy, max_out);
  const size_t at = out.size();
  out.resize(at + n);
  if (!snappy::RawUncompress(p, block.size(), reinterpret_cast<char*>(out.data() + at)))
    return corrupt(compression::snappy, "a block is invalid");
  return {};
}

result<bytes> unsnappy(bytes_view in, size_t max_out) {
  bytes out;
  const bool framed = in.size() >= xerial_magic.size() &&
                      std::equal(xerial_magic.begin(), xerial_magic.end(), in.begin());
  if (!framed) {
    if (auto s = unsnappy_block(in, out, max_out); !s) return s.err();
    return out;
  }
  if (in.size() < xerial_header_size)
    return corrupt(compression::snappy, "the xerial stream header is truncated");
  for (size_t pos = xerial_header_size; pos < in.size();) {
    if (in.size() - pos < 4)
      return corrupt(compression::snappy, "a block length is truncated");
    const auto length = bf::load_be<uint32_t>(in.data() + pos);
    pos += 4;
    if (length > in.size() - pos)
      return corrupt(compression::snappy,
                     fmt::format("a block of {} bytes at stream offset {} runs past the {} bytes "
                                 "of the stream",
                                 length, pos - 4, in.size()));
    if (auto s = unsnappy_block(in.subspan(pos, length), out, max_out); !s) return s.err();
    pos += length;
  }
  return out;
}

result<bytes> unlz4(bytes_view in, size_t max_out) {
  LZ4F_dctx* raw = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&raw, LZ4F_VERSION)))
    return corrupt(compression::lz4, "lz4 init failed");
  std::unique_ptr<LZ4F_dctx, LZ4F_errorCode_t (*)(LZ4F_dctx*)> ctx(
      raw, LZ4F_freeDecompressionContext);
  bounded_output out(in.size(), max_out);
  size_t pos = 0;
  for (;;) {
    const auto room = out.room();
    if (out.over()) return too_large(compression::lz4, max_out);
    size_t src_size = in.size() - pos;
    size_t dst_size = room.size();
    const size_t hint =
        LZ4F_decompress(ctx.get(), room.data(), &dst_size, in.data() + pos, &src_size, nullptr);
    if (LZ4F_isError(hint)) return corrupt(compression::lz4, LZ4F_getErrorName(hint));
    pos += src_size;
    out.wrote(dst_size);
    if (out.over()) return too_large(compression::lz4, max_out);
    if (hint == 0) {
      if (pos != in.size())
        return corrupt(compression::lz4,
                       fmt::format("{} bytes follow the end of the frame", in.size() - pos));
      break;
    }
    if (pos == in.size() && src_size == 0 && dst_size == 0)
      return corrupt(compression::lz4, "the frame is truncated");
  }
  return std::move(out).take();
}

result<bytes> unzstd(bytes_view in, size_t max_out) {
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> ctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
  if (!ctx || ZSTD_isError(ZSTD_DCtx_setParameter(ctx.get(), ZSTD_d_windowLogMax,
                                                  zstd_window_log_max)))
    return corrupt(compression::zstd, "zstd init failed");
  ZSTD_inBuffer input{in.data(), in.size(), 0};
  bounded_output out(in.size(), max_out);
  for (;;) {
    const auto room = out.room();
    if (out.over()) return too_large(compression::zstd, max_out);
    ZSTD_outBuffer output{room.data(), room.size(), 0};
    const size_t rc = ZSTD_decompressStream(ctx.get(), &output, &input);
    if (ZSTD_isError(rc)) {
      if (ZSTD_getErrorCode(rc) == ZSTD_error_frameParameter_windowTooLarge)
        return make_error(errc::message_too_large,
                          fmt::format("zstd records section needs a window above 2^{} bytes",
                                      zstd_window_log_max));
      return corrupt(compression::zstd, ZSTD_getErrorName(rc));
    }
    out.wrote(output.pos);
    if (out.over()) return too_large(compression::zstd, max_out);
    // rc == 0: a frame ended; a further frame may follow, as zstd's own tools allow.
    if (rc == 0 && input.pos == input.size) break;
    if (input.pos == input.size && output.pos < output.size)
      return corrupt(compression::zstd, "the frame is truncated");
  }
  return std::move(out).take();
}

bytes gzip(bytes_view in) {
  z_stream s{};
  [[maybe_unused]] const int init =
      deflateInit2(&s, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  assert(init == Z_OK);
  bytes out(deflateBound(&s, static_cast<uLong>(in.size())));
  s.next_in = const_cast<Bytef*>(in.data());
  s.avail_in = static_cast<uInt>(in.size());
  s.next_out = out.data();
  s.avail_out = static_cast<uInt>(out.size());
  [[maybe_unused]] const int rc = deflate(&s, Z_FINISH);
  assert(rc == Z_STREAM_END && "deflateBound leaves room for the whole stream");
  out.resize(s.total_out);
  deflateEnd(&s);
  return out;
}

bytes snappy_framed(bytes_view in) {
  bytes out(xerial_magic.begin(), xerial_magic.end());
  out.resize(xerial_header_size);
  bf::store_be<int32_t>(out.data() + xerial_magic.size(), 1);
  bf::store_be<int32_t>(out.data() + xerial_magic.size() + 4, 1);
  for (size_t pos = 0; pos < in.size(); pos += xerial_block_size) {
    const size_t n = std::min(xerial_block_size, in.size() - pos);
    const size_t at = out.size();
    out.resize(at + 4 + snappy::MaxCompressedLength(n));
    size_t written = 0;
    snappy::RawCompress(reinterpret_cast<const char*>(in.data() + pos), n,
                        reinterpret_cast<char*>(out.data() + at + 4), &written);
    bf::store_be<uint32_t>(out.data() + at, static_cast<uint32_t>(written));
    out.resize(at + 4 + written);
  }
  return out;
}

bytes lz4_frame(bytes_view in) {
  // Independent 64 KiB blocks: what Kafka's Java producer writes and its reader requires.
  LZ4F_preferences_t prefs{};
  prefs.frameInfo.blockSizeID = LZ4F_max64KB;
  prefs.frameInfo.blockMode = LZ4F_blockIndependent;
  bytes out(LZ4F_compressFrameBound(in.size(), &prefs));
  [[maybe_unused]] const size_t n =
      LZ4F_compressFrame(out.data(), out.size(), in.data(), in.size(), &prefs);
  assert(!LZ4F_isError(n));
  out.resize(n);
  return out;
}

bytes zstd_frame(bytes_view in) {
  bytes out(ZSTD_compressBound(in.size()));
  [[maybe_unused]] const size_t n = ZSTD_compress(out.data(), out.size(), in.data(), in.size(), 3);
  assert(!ZSTD_isError(n));
  out.resize(n);
  return out;
}

} // namespace

std::string_view to_string(compression codec) {
  switch (codec) {
    case compression::none: return "none";
    case compression::gzip: return "gzip";
    case compression::snappy: return "snappy";
    case compression::lz4: return "lz4";
    case compression::zstd: return "zstd";
  }
  return "?";
}

std::optional<compression> compression_from_name(std::string_view name) {
  for (auto c : {compression::none, compression::gzip, compression::snappy, compression::lz4,
                 compression::zstd})
    if (to_string(c) == name) return c;
  return std::nullopt;
}

std::optional<compression> compression_from_attributes(int16_t attributes) {
  const int bits = attributes & bf::compression_mask;
  if (bits > static_cast<int>(compression::zstd)) return std::nullopt;
  return static_cast<compression>(bits);
}

bytes compress(compression codec, bytes_view in) {
  switch (codec) {
    case compression::none: return bytes(in.begin(), in.end());
    case compression::gzip: return gzip(in);
    case compression::snappy: return snappy_framed(in);
    case compression::lz4: return lz4_frame(in);
    case compression::zstd: return zstd_frame(in);
  }
  return {};
}

result<bytes> decompress(compression codec, bytes_view in, size_t max_out) {
  switch (codec) {
    case compression::none:
      if (in.size() > max_out) return too_large(codec, max_out);
      return bytes(in.begin(), in.end());
    case compression::gzip: return gunzip(in, max_out);
    case compression::snappy: return unsnappy(in, max_out);
    case compression::lz4: return unlz4(in, max_out);
    case compression::zstd: return unzstd(in, max_out);
  }
  return corrupt(codec, "unknown codec");
}

} // namespace capstan
