#include "runtime/kafka/wire_reader.hpp"

#include <bit>
#include <type_traits>

#include "runtime/batch/varint.hpp"

namespace capstan::kafka {
namespace {

template <class T>
T load_be(const uint8_t* p) {
  std::make_unsigned_t<T> u = 0;
  for (size_t i = 0; i < sizeof(T); ++i) u = static_cast<decltype(u)>((u << 8) | p[i]);
  return static_cast<T>(u);
}

} // namespace

void wire_reader::fail(errc code, std::string message) {
  if (failed_) return;
  failed_ = true;
  error_ = make_error(code, std::move(message));
}

bool wire_reader::need(size_t n, std::string_view what) {
  if (failed_) return false;
  if (in_.size() - pos_ >= n) return true;
  fail(errc::corrupt_message, std::string(what) + " at byte " + std::to_string(pos_) +
                                  " needs " + std::to_string(n) + " bytes, " +
                                  std::to_string(in_.size() - pos_) + " left");
  return false;
}

#define CAPSTAN_KAFKA_READ_FIXED(name, T)                                                      \
  T wire_reader::name() {                                                                      \
    if (!need(sizeof(T), #T)) return T{};                                                      \
    T out = load_be<T>(in_.data() + pos_);                                                     \
    pos_ += sizeof(T);                                                                         \
    return out;                                                                                \
  }
CAPSTAN_KAFKA_READ_FIXED(read_int8, int8_t)
CAPSTAN_KAFKA_READ_FIXED(read_int16, int16_t)
CAPSTAN_KAFKA_READ_FIXED(read_int32, int32_t)
CAPSTAN_KAFKA_READ_FIXED(read_int64, int64_t)
CAPSTAN_KAFKA_READ_FIXED(read_uint16, uint16_t)
CAPSTAN_KAFKA_READ_FIXED(read_uint32, uint32_t)
#undef CAPSTAN_KAFKA_READ_FIXED

double wire_reader::read_float64() {
  return std::bit_cast<double>(static_cast<uint64_t>(read_int64()));
}

bool wire_reader::read_bool() { return read_int8() != 0; }

uint32_t wire_reader::read_unsigned_varint() {
  if (failed_) return 0;
  uint32_t u = 0;
  for (unsigned shift = 0; shift < 35; shift += 7) {
    if (!need(1, "unsigned varint")) return 0;
    const uint8_t b = in_[pos_++];
    u |= static_cast<uint32_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return u;
  }
  fail(errc::corrupt_message, "unsigned varint longer than 5 bytes at byte " +
                                  std::to_string(pos_ - 5));
  return 0;
}

template <class T>
T wire_reader::read_zigzag(bool (*decode)(bytes_view, size_t&, T&), const char* what) {
  T out = 0;
  if (!failed_ && !decode(in_, pos_, out))
    fail(errc::corrupt_message, std::string("bad ") + what + " at byte " + std::to_string(pos_));
  return out;
}

int32_t wire_reader::read_varint() { return read_zigzag<int32_t>(decode_varint, "varint"); }
int64_t wire_reader::read_varlong() { return read_zigzag<int64_t>(decode_varlong, "varlong"); }

bytes_view wire_reader::read_raw(size_t n, std::string_view what) {
  if (!need(n, what)) return {};
  bytes_view out = in_.subspan(pos_, n);
  pos_ += n;
  return out;
}

std::optional<size_t> wire_reader::checked_length(int64_t length, std::string_view what) {
  if (failed_ || length == -1) return std::nullopt;
  if (length < 0) {
    fail(errc::corrupt_message, std::string(what) + ": negative length " + std::to_string(length));
    return std::nullopt;
  }
  if (static_cast<uint64_t>(length) > in_.size() - pos_) {
    fail(errc::corrupt_message, std::string(what) + ": length " + std::to_string(length) +
                                    " at byte " + std::to_string(pos_) + " but only " +
                                    std::to_string(in_.size() - pos_) + " bytes left");
    return std::nullopt;
  }
  return static_cast<size_t>(length);
}

std::optional<size_t> wire_reader::read_string_length(bool compact, std::string_view what) {
  return checked_length(compact ? int64_t{read_unsigned_varint()} - 1 : int64_t{read_int16()},
                        what);
}

std::optional<size_t> wire_reader::read_bytes_length(bool compact, std::string_view what) {
  return checked_length(compact ? int64_t{read_unsigned_varint()} - 1 : int64_t{read_int32()},
                        what);
}

std::optional<size_t> wire_reader::read_array_length(bool compact, std::string_view what) {
  return read_bytes_length(compact, what);
}

} // namespace capstan::kafka
