#pragma once

// Field codecs for Kafka's fixed-layout structures: big-endian integers, a string as an int16
// length and its bytes (-1 for a null one), bytes as an int32 length and them (-1 for null).
// Shared by the records of __consumer_offsets (offset_commit_record, group_metadata_record) and
// the consumer protocol's subscriptions and assignments (consumer_protocol).

#include <cassert>
#include <cstdint>
#include <string>
#include <string_view>

#include "runtime/batch/record_batch_format.hpp"
#include "runtime/types.hpp"

namespace capstan {

// A string field's length must fit its int16 length prefix.
inline constexpr size_t max_record_string_bytes = 32767;

namespace record_fields {

class writer {
public:
  template <class T>
  void put(T v) {
    const size_t at = out_.size();
    out_.resize(at + sizeof(T));
    batch_format::store_be<T>(out_.data() + at, v);
  }
  void put_string(std::string_view s) {
    assert(s.size() <= max_record_string_bytes);
    put<int16_t>(static_cast<int16_t>(s.size()));
    out_.insert(out_.end(), s.begin(), s.end());
  }
  // Empty as null (length -1), as Kafka writes an absent leader or instance id.
  void put_nullable_string(std::string_view s) {
    if (s.empty())
      put<int16_t>(-1);
    else
      put_string(s);
  }
  void put_bytes(bytes_view b) {
    put<int32_t>(static_cast<int32_t>(b.size()));
    out_.insert(out_.end(), b.begin(), b.end());
  }
  bytes take() { return std::move(out_); }

private:
  bytes out_;
};

// Reads fields in order; any read past the end sets the error and yields zero values.
class reader {
public:
  explicit reader(bytes_view data) : data_(data) {}

  template <class T>
  T get() {
    if (!ok_ || data_.size() - pos_ < sizeof(T)) {
      ok_ = false;
      return T{};
    }
    T v = batch_format::load_be<T>(data_.data() + pos_);
    pos_ += sizeof(T);
    return v;
  }
  std::string get_string() { return get_text(false); }
  // Null (length -1) reads as empty.
  std::string get_nullable_string() { return get_text(true); }
  bytes get_bytes() { return get_blob(false); }
  // Null (length -1) reads as empty.
  bytes get_nullable_bytes() { return get_blob(true); }
  // An array's int32 count, checked against what is left (each element takes at least
  // `min_element_bytes`): a negative or impossible count sets the error and reads as 0.
  size_t get_count(size_t min_element_bytes) {
    const auto n = get<int32_t>();
    if (!ok_ || n < 0 || static_cast<size_t>(n) > (data_.size() - pos_) / min_element_bytes) {
      ok_ = false;
      return 0;
    }
    return static_cast<size_t>(n);
  }
  bool ok() const { return ok_; }
  bool at_end() const { return pos_ == data_.size(); }

private:
  bytes get_blob(bool nullable) {
    const auto len = get<int32_t>();
    if (ok_ && nullable && len == -1) return {};
    if (!ok_ || len < 0 || data_.size() - pos_ < static_cast<size_t>(len)) {
      ok_ = false;
      return {};
    }
    bytes b(data_.begin() + static_cast<std::ptrdiff_t>(pos_),
            data_.begin() + static_cast<std::ptrdiff_t>(pos_ + static_cast<size_t>(len)));
    pos_ += static_cast<size_t>(len);
    return b;
  }

  std::string get_text(bool nullable) {
    const auto len = get<int16_t>();
    if (ok_ && nullable && len == -1) return {};
    if (!ok_ || len < 0 || data_.size() - pos_ < static_cast<size_t>(len)) {
      ok_ = false;
      return {};
    }
    std::string s(reinterpret_cast<const char*>(data_.data() + pos_), static_cast<size_t>(len));
    pos_ += static_cast<size_t>(len);
    return s;
  }

  bytes_view data_;
  size_t pos_ = 0;
  bool ok_ = true;
};

} // namespace record_fields

} // namespace capstan
