#include "runtime/kafka/wire_writer.hpp"

#include <bit>

#include "runtime/batch/varint.hpp"

namespace capstan::kafka {

void wire_writer::write_float64(double x) { write_be(std::bit_cast<uint64_t>(x)); }

void wire_writer::write_unsigned_varint(uint32_t x) {
  while (x >= 0x80) {
    out_.push_back(static_cast<uint8_t>(x | 0x80));
    x >>= 7;
  }
  out_.push_back(static_cast<uint8_t>(x));
}

void wire_writer::write_varint(int32_t x) {
  uint8_t buf[max_varint_bytes];
  write_raw(bytes_view(buf, static_cast<size_t>(encode_varint(buf, x) - buf)));
}

void wire_writer::write_varlong(int64_t x) {
  uint8_t buf[max_varlong_bytes];
  write_raw(bytes_view(buf, static_cast<size_t>(encode_varlong(buf, x) - buf)));
}

void wire_writer::write_string_length(bool compact, std::optional<size_t> length) {
  if (compact) write_unsigned_varint(length ? static_cast<uint32_t>(*length + 1) : 0);
  else write_int16(length ? static_cast<int16_t>(*length) : int16_t{-1});
}

void wire_writer::write_bytes_length(bool compact, std::optional<size_t> length) {
  if (compact) write_unsigned_varint(length ? static_cast<uint32_t>(*length + 1) : 0);
  else write_int32(length ? static_cast<int32_t>(*length) : -1);
}

} // namespace capstan::kafka
