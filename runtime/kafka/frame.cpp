#include "runtime/kafka/frame.hpp"

#include <cassert>
#include <limits>
#include <string>

namespace capstan::kafka {

result<frame_cut> next_frame(bytes_view in, int32_t max_frame_bytes) {
  if (in.size() < frame_size_bytes) return frame_cut{};
  const auto size = static_cast<int32_t>(uint32_t{in[0]} << 24 | uint32_t{in[1]} << 16 |
                                         uint32_t{in[2]} << 8 | uint32_t{in[3]});
  if (size < 0)
    return make_error(errc::corrupt_message, "negative frame size " + std::to_string(size));
  if (size > max_frame_bytes)
    return make_error(errc::message_too_large,
                      "frame of " + std::to_string(size) + " bytes is larger than " +
                          std::to_string(max_frame_bytes) + " (socket.request.max.bytes)");
  const auto total = frame_size_bytes + static_cast<size_t>(size);
  if (in.size() < total) return frame_cut{};
  return frame_cut{in.subspan(frame_size_bytes, static_cast<size_t>(size)), total};
}

size_t begin_frame(bytes& out) {
  const size_t at = out.size();
  out.resize(at + frame_size_bytes, 0);
  return at;
}

void end_frame(bytes& out, size_t frame_start) {
  const size_t size = out.size() - frame_start - frame_size_bytes;
  assert(size <= size_t{std::numeric_limits<int32_t>::max()});
  for (size_t i = 0; i < frame_size_bytes; ++i)
    out[frame_start + i] = static_cast<uint8_t>(size >> (8 * (frame_size_bytes - 1 - i)));
}

} // namespace capstan::kafka
