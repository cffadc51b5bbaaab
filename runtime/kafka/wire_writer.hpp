#pragma once

// Writing of Kafka's primitive wire types, the counterpart of wire_reader: big-endian integers,
// varints, and the classic or compact length prefixes (docs/kafka.md, "Primitive types").

#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

#include "runtime/types.hpp"

namespace capstan::kafka {

class wire_writer {
public:
  // Appends to `out`, which must outlive the writer.
  explicit wire_writer(bytes& out) : out_(out) {}
  wire_writer(const wire_writer&) = delete;
  wire_writer& operator=(const wire_writer&) = delete;

  void write_int8(int8_t x) { write_be(x); }
  void write_int16(int16_t x) { write_be(x); }
  void write_int32(int32_t x) { write_be(x); }
  void write_int64(int64_t x) { write_be(x); }
  void write_uint16(uint16_t x) { write_be(x); }
  void write_uint32(uint32_t x) { write_be(x); }
  void write_float64(double x);
  void write_bool(bool x) { write_int8(x ? 1 : 0); }
  void write_unsigned_varint(uint32_t x);
  void write_varint(int32_t x);
  void write_varlong(int64_t x);
  void write_raw(bytes_view data) { out_.insert(out_.end(), data.begin(), data.end()); }

  // A length prefix; nullopt writes null (-1, or 0 in compact form). Classic strings take an
  // int16, bytes and arrays an int32.
  void write_string_length(bool compact, std::optional<size_t> length);
  void write_bytes_length(bool compact, std::optional<size_t> length);

  size_t size() const { return out_.size(); }

private:
  template <class T>
  void write_be(T x) {
    auto u = static_cast<std::make_unsigned_t<T>>(x);
    for (size_t i = sizeof(T); i-- > 0;) out_.push_back(static_cast<uint8_t>(u >> (8 * i)));
  }

  bytes& out_;
};

} // namespace capstan::kafka
