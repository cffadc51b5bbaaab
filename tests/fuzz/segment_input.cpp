#include "tests/fuzz/segment_input.hpp"

#include <algorithm>
#include <cassert>

namespace capstan::fuzz {

namespace {

class input_reader {
public:
  explicit input_reader(bytes_view in) : in_(in) {}

  uint8_t u8() { return pos_ < in_.size() ? in_[pos_++] : 0; }
  uint16_t u16() {
    const uint8_t lo = u8();
    return static_cast<uint16_t>(lo | (u8() << 8));
  }
  bytes take(size_t n) {
    n = std::min(n, in_.size() - pos_);
    bytes out(in_.begin() + static_cast<std::ptrdiff_t>(pos_),
              in_.begin() + static_cast<std::ptrdiff_t>(pos_ + n));
    pos_ += n;
    return out;
  }

private:
  bytes_view in_;
  size_t pos_ = 0;
};

void put_u16(bytes& out, size_t v) {
  assert(v <= 0xffff);
  out.push_back(static_cast<uint8_t>(v & 0xff));
  out.push_back(static_cast<uint8_t>(v >> 8));
}

} // namespace

segment_input decode_segment_input(bytes_view in) {
  input_reader r(in);
  segment_input out;
  const uint8_t flags = r.u8();
  out.fix_crcs = (flags & 1) != 0;
  out.trust_below_last = (flags & 2) != 0;
  const int count = std::min(3, ((flags >> 2) & 3) + 1);
  out.index_interval_bytes = r.u16();
  int64_t base = 0;
  for (int i = 0; i < count; ++i) {
    segment_files s;
    base += r.u16();
    s.base = base;
    const size_t log_size = r.u16();
    const size_t index_size = r.u16();
    const size_t time_index_size = r.u16();
    s.log = r.take(log_size);
    s.index = r.take(index_size);
    s.time_index = r.take(time_index_size);
    out.segments.push_back(std::move(s));
  }
  return out;
}

bytes encode_segment_input(const segment_input& input) {
  assert(!input.segments.empty() && input.segments.size() <= 3);
  bytes out;
  out.push_back(static_cast<uint8_t>((input.fix_crcs ? 1 : 0) | (input.trust_below_last ? 2 : 0) |
                                     ((input.segments.size() - 1) << 2)));
  put_u16(out, input.index_interval_bytes);
  int64_t previous = 0;
  for (const auto& s : input.segments) {
    put_u16(out, static_cast<size_t>(s.base - previous));
    previous = s.base;
    put_u16(out, s.log.size());
    put_u16(out, s.index.size());
    put_u16(out, s.time_index.size());
    out.insert(out.end(), s.log.begin(), s.log.end());
    out.insert(out.end(), s.index.begin(), s.index.end());
    out.insert(out.end(), s.time_index.begin(), s.time_index.end());
  }
  return out;
}

} // namespace capstan::fuzz
