#pragma once

// Kafka's framing on a connection: every request and response is an int32 big-endian size,
// then that many bytes (docs/kafka.md, "Frames"). A reader cuts frames off the front of what a
// connection received so far, refusing a size that is negative (CORRUPT_MESSAGE) or larger than
// socket.request.max.bytes (MESSAGE_TOO_LARGE) before waiting for its bytes, so a peer cannot
// make it buffer more than the maximum.

#include <cstddef>
#include <cstdint>

#include "runtime/result.hpp"
#include "runtime/types.hpp"

namespace capstan::kafka {

inline constexpr size_t frame_size_bytes = 4;

// The first frame of `in`, and how many bytes of `in` it took (its size prefix included).
// consumed == 0: `in` holds no complete frame yet; read more and call again.
struct frame_cut {
  bytes_view frame;
  size_t consumed = 0;
};

// REQUIRES: max_frame_bytes >= 0.
result<frame_cut> next_frame(bytes_view in, int32_t max_frame_bytes);

// Writing a frame in place: begin_frame appends a placeholder size and returns where it is;
// end_frame writes the size of what was appended since. REQUIRES: at most 2^31 - 1 bytes.
size_t begin_frame(bytes& out);
void end_frame(bytes& out, size_t frame_start);

} // namespace capstan::kafka
