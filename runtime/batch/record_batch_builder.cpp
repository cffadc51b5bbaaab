#include "runtime/batch/record_batch_builder.hpp"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "runtime/batch/crc32c.hpp"
#include "runtime/batch/record_batch_format.hpp"
#include "runtime/batch/varint.hpp"

namespace capstan {

namespace bf = batch_format;

namespace {

// Encoded size of a length-prefixed byte string; null is the single byte of varint -1.
size_t string_size(const std::optional<bytes_view>& s) {
  if (!s) return varint_size(-1);
  return varint_size(static_cast<int32_t>(s->size())) + s->size();
}

uint8_t* put_string(uint8_t* out, const std::optional<bytes_view>& s) {
  if (!s) return encode_varint(out, -1);
  out = encode_varint(out, static_cast<int32_t>(s->size()));
  if (!s->empty()) std::memcpy(out, s->data(), s->size());
  return out + s->size();
}

std::optional<bytes_view> as_view(const std::optional<bytes>& b) {
  if (!b) return std::nullopt;
  return bytes_view(*b);
}

bytes_view as_view(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

} // namespace

record_batch_builder::record_batch_builder(offset base, timestamp_ms base_timestamp)
    : base_(base), base_timestamp_(base_timestamp), max_timestamp_(no_timestamp) {}

record_batch_builder&
record_batch_builder::add(std::optional<bytes_view> key, std::optional<bytes_view> value,
                          timestamp_ms timestamp,
                          std::vector<std::pair<bytes, std::optional<bytes>>> headers) {
  // Wraps like Kafka's Java long subtraction instead of overflowing.
  const auto timestamp_delta = static_cast<int64_t>(static_cast<uint64_t>(timestamp) -
                                                    static_cast<uint64_t>(base_timestamp_));
  const int32_t offset_delta = next_delta_;

  size_t body = 1 + varlong_size(timestamp_delta) + varint_size(offset_delta) + string_size(key) +
                string_size(value) + varint_size(static_cast<int32_t>(headers.size()));
  for (const auto& [k, v] : headers) body += string_size(bytes_view(k)) + string_size(as_view(v));
  const auto body_length = static_cast<int32_t>(body);

  const size_t at = records_.size();
  records_.resize(at + varint_size(body_length) + body);
  uint8_t* out = records_.data() + at;
  out = encode_varint(out, body_length);
  *out++ = 0; // record attributes: unused in v2
  out = encode_varlong(out, timestamp_delta);
  out = encode_varint(out, offset_delta);
  out = put_string(out, key);
  out = put_string(out, value);
  out = encode_varint(out, static_cast<int32_t>(headers.size()));
  for (const auto& [k, v] : headers) {
    out = put_string(out, bytes_view(k));
    out = put_string(out, as_view(v));
  }
  assert(out == records_.data() + records_.size());

  max_timestamp_ = std::max(max_timestamp_, timestamp);
  ++next_delta_;
  ++count_;
  return *this;
}

record_batch_builder& record_batch_builder::add(std::string_view key, std::string_view value,
                                                timestamp_ms timestamp) {
  return add(as_view(key), as_view(value), timestamp);
}

record_batch_builder& record_batch_builder::skip_offsets(int32_t n) {
  assert(n >= 0);
  next_delta_ += n;
  return *this;
}

record_batch_builder& record_batch_builder::producer(int64_t id, int16_t epoch,
                                                     int32_t base_sequence) {
  producer_id_ = id;
  producer_epoch_ = epoch;
  base_sequence_ = base_sequence;
  return *this;
}

record_batch_builder& record_batch_builder::compress_with(compression codec) {
  codec_ = codec;
  return *this;
}

record_batch_builder& record_batch_builder::leader_epoch(capstan::leader_epoch epoch) {
  leader_epoch_ = epoch.value();
  return *this;
}

size_t record_batch_builder::size_bytes() const { return bf::header_size + records_.size(); }

bytes record_batch_builder::build() const {
  const bytes packed = codec_ == compression::none ? bytes{} : compress(codec_, records_);
  const bytes& section = codec_ == compression::none ? records_ : packed;
  bytes out(bf::header_size + section.size());
  uint8_t* d = out.data();
  bf::store_be<int64_t>(d + bf::base_offset_at, base_.value());
  bf::store_be<int32_t>(d + bf::batch_length_at,
                        static_cast<int32_t>(out.size() - bf::log_overhead));
  bf::store_be<int32_t>(d + bf::partition_leader_epoch_at, leader_epoch_);
  d[bf::magic_at] = static_cast<uint8_t>(bf::magic_v2);
  bf::store_be<int16_t>(d + bf::attributes_at, static_cast<int16_t>(codec_));
  bf::store_be<int32_t>(d + bf::last_offset_delta_at, next_delta_ - 1);
  bf::store_be<int64_t>(d + bf::base_timestamp_at, base_timestamp_);
  bf::store_be<int64_t>(d + bf::max_timestamp_at, max_timestamp_);
  bf::store_be<int64_t>(d + bf::producer_id_at, producer_id_);
  bf::store_be<int16_t>(d + bf::producer_epoch_at, producer_epoch_);
  bf::store_be<int32_t>(d + bf::base_sequence_at, base_sequence_);
  bf::store_be<int32_t>(d + bf::records_count_at, count_);
  if (!section.empty()) std::memcpy(d + bf::records_at, section.data(), section.size());
  bf::store_be<uint32_t>(d + bf::crc_at, crc32c(bytes_view(out).subspan(bf::attributes_at)));
  return out;
}

void record_batch_builder::reset(offset base, timestamp_ms base_timestamp) {
  base_ = base;
  base_timestamp_ = base_timestamp;
  max_timestamp_ = no_timestamp;
  next_delta_ = 0;
  count_ = 0;
  producer_id_ = -1;
  producer_epoch_ = -1;
  base_sequence_ = -1;
  leader_epoch_ = -1;
  records_.clear();
}

} // namespace capstan
