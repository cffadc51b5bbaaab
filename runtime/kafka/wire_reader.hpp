#pragma once

// Bounds-checked reading of Kafka's primitive wire types (docs/kafka.md, "Primitive types"):
// big-endian integers, unsigned and zigzag varints, uuid, float64, and the length prefixes of
// strings, bytes and arrays in their classic (int16/int32) and compact (unsigned varint of
// length + 1) forms. A reader never reads past its input and never reports a length longer than
// the bytes left, so a caller may reserve what a length says. The first failure sticks: later
// reads fail too and return zeros, and `error()` names the first one (CORRUPT_MESSAGE).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/result.hpp"
#include "runtime/types.hpp"

namespace capstan::kafka {

class wire_reader {
public:
  explicit wire_reader(bytes_view in) : in_(in) {}
  wire_reader(const wire_reader&) = default;
  wire_reader& operator=(const wire_reader&) = default;

  bool ok() const { return !failed_; }
  const error& err() const { return error_; }
  size_t position() const { return pos_; }
  size_t remaining() const { return failed_ ? 0 : in_.size() - pos_; }

  int8_t read_int8();
  int16_t read_int16();
  int32_t read_int32();
  int64_t read_int64();
  uint16_t read_uint16();
  uint32_t read_uint32();
  double read_float64();
  bool read_bool();
  // Kafka's ByteUtils.readUnsignedVarint: at most 5 bytes.
  uint32_t read_unsigned_varint();
  int32_t read_varint();
  int64_t read_varlong();

  // The next n bytes, consumed. REQUIRES nothing: n past the end fails.
  bytes_view read_raw(size_t n, std::string_view what);

  // A length prefix: a length no larger than remaining(), or nullopt for null (-1) and on
  // failure (tell them apart by ok()). `compact`: unsigned varint of length + 1 (0 is null);
  // otherwise int16 (strings) or int32 (bytes and arrays). Another negative length, or one past
  // the end, fails here, naming `what`.
  std::optional<size_t> read_string_length(bool compact, std::string_view what);
  std::optional<size_t> read_bytes_length(bool compact, std::string_view what);
  // Arrays: the count is checked against remaining() as Kafka's generated code does ("Tried to
  // allocate a collection of size N, but there are only M bytes remaining").
  std::optional<size_t> read_array_length(bool compact, std::string_view what);

  // Records the failure (if it is the first) and stops the reader.
  void fail(errc code, std::string message);

private:
  bool need(size_t n, std::string_view what);
  std::optional<size_t> checked_length(int64_t length, std::string_view what);
  template <class T>
  T read_zigzag(bool (*decode)(bytes_view, size_t&, T&), const char* what);

  bytes_view in_;
  size_t pos_ = 0;
  bool failed_ = false;
  error error_;
};

} // namespace capstan::kafka
