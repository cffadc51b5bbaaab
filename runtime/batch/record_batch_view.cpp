#include "runtime/batch/record_batch_view.hpp"

#include <algorithm>
#include <cassert>
#include <limits>
#include <string_view>

#include <fmt/format.h>

#include "runtime/batch/crc32c.hpp"
#include "runtime/batch/record_batch_format.hpp"
#include "runtime/batch/varint.hpp"

namespace capstan {

namespace bf = batch_format;

namespace {

error corrupt(std::string message) { return make_error(errc::corrupt_message, std::move(message)); }

// Why a record failed to decode; positions are offsets within the batch.
struct record_fault {
  enum kind_t {
    truncated,    // the field runs past the record (for "length", past the batch)
    out_of_range, // the length or count in the field does not fit what is left
    unused_bytes, // the record's length leaves bytes after its last header
  };
  kind_t kind = truncated;
  std::string_view field; // e.g. "key length"
  size_t at = 0;          // batch offset of the field
  int64_t value = 0;      // the offending length or count (for unused_bytes: the record length)
  size_t left = 0;        // bytes left in the record (batch, for "length") after the field
};

// Decodes the record at batch[pos]. The record's own length bounds every field: nothing is read
// past pos + length, nor past the batch. With Fill, stores the fields in out (headers included);
// without, only checks them, so validation allocates nothing. On success advances pos past the
// record and returns true; otherwise returns false with fault set.
template <bool Fill>
bool decode_record(bytes_view batch, size_t& pos, record_view& out, record_fault& fault) {
  size_t p = pos;
  int32_t length = 0;
  if (!decode_varint(batch, p, length)) {
    fault = {record_fault::truncated, "length", pos};
    return false;
  }
  if (length < 0 || static_cast<size_t>(length) > batch.size() - p) {
    fault = {record_fault::out_of_range, "length", pos, length, batch.size() - p};
    return false;
  }
  const bytes_view rec = batch.first(p + static_cast<size_t>(length));

  auto read_varint = [&](std::string_view field, int32_t& v) {
    if (decode_varint(rec, p, v)) return true;
    fault = {record_fault::truncated, field, p};
    return false;
  };
  // A length-prefixed byte string: -1 means null where allow_null; anything else must fit.
  auto read_bytes = [&](std::string_view field, bool allow_null, std::optional<bytes_view>& v) {
    size_t at = p;
    int32_t n = 0;
    if (!read_varint(field, n)) return false;
    if (n == -1 && allow_null) {
      v.reset();
      return true;
    }
    if (n < 0 || static_cast<size_t>(n) > rec.size() - p) {
      fault = {record_fault::out_of_range, field, at, n, rec.size() - p};
      return false;
    }
    v = rec.subspan(p, static_cast<size_t>(n));
    p += static_cast<size_t>(n);
    return true;
  };

  if (p >= rec.size()) {
    fault = {record_fault::truncated, "attributes", p};
    return false;
  }
  const auto attributes = static_cast<int8_t>(rec[p++]);
  int64_t timestamp_delta = 0;
  if (!decode_varlong(rec, p, timestamp_delta)) {
    fault = {record_fault::truncated, "timestamp delta", p};
    return false;
  }
  int32_t offset_delta = 0;
  std::optional<bytes_view> key, value;
  if (!read_varint("offset delta", offset_delta) || !read_bytes("key length", true, key) ||
      !read_bytes("value length", true, value))
    return false;
  size_t header_count_at = p;
  int32_t header_count = 0;
  if (!read_varint("header count", header_count)) return false;
  // Each header takes at least two bytes: this bounds the count before any work is done on it.
  if (header_count < 0 || static_cast<size_t>(header_count) > (rec.size() - p) / 2) {
    fault = {record_fault::out_of_range, "header count", header_count_at, header_count,
             rec.size() - p};
    return false;
  }
  if constexpr (Fill) out.headers.clear();
  for (int32_t h = 0; h < header_count; ++h) {
    std::optional<bytes_view> header_key, header_value;
    if (!read_bytes("header key length", false, header_key) ||
        !read_bytes("header value length", true, header_value))
      return false;
    if constexpr (Fill) out.headers.push_back({*header_key, header_value});
  }
  if (p != rec.size()) {
    fault = {record_fault::unused_bytes, "record length", p, length, rec.size() - p};
    return false;
  }
  if constexpr (Fill) {
    out.attributes = attributes;
    out.timestamp_delta = timestamp_delta;
    out.offset_delta = offset_delta;
    out.key = key;
    out.value = value;
  } else {
    out.timestamp_delta = timestamp_delta;
    out.offset_delta = offset_delta;
  }
  pos = p;
  return true;
}

// a + b, or a - b, saturated at the int64 range.
int64_t saturating_add(int64_t a, int64_t b) {
  int64_t out = 0;
  if (!__builtin_add_overflow(a, b, &out)) return out;
  return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}
int64_t saturating_sub(int64_t a, int64_t b) {
  int64_t out = 0;
  if (!__builtin_sub_overflow(a, b, &out)) return out;
  return b > 0 ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
}

error invalid_timestamp(std::string message) {
  return make_error(errc::invalid_timestamp, std::move(message));
}

std::string describe(const record_fault& f, int32_t index, size_t record_at) {
  if (f.kind == record_fault::truncated)
    return fmt::format("record {} at batch offset {}: {} at batch offset {} runs past the {}",
                       index, record_at, f.field, f.at, f.field == "length" ? "batch" : "record");
  if (f.kind == record_fault::unused_bytes)
    return fmt::format(
        "record {} at batch offset {}: record length {} leaves {} bytes unused after "
        "its last header (batch offset {})",
        index, record_at, f.value, f.left, f.at);
  return fmt::format("record {} at batch offset {}: {} {} at batch offset {} is out of range ({} "
                     "bytes left in the {})",
                     index, record_at, f.field, f.value, f.at, f.left,
                     f.field == "length" ? "batch" : "record");
}

} // namespace

result<size_t> record_batch_view::frame_size(bytes_view bytes) {
  if (bytes.size() < bf::header_size)
    return corrupt(fmt::format("batch header truncated: {} bytes, a RecordBatch v2 header needs {}",
                               bytes.size(), bf::header_size));
  const auto length = bf::load_be<int32_t>(bytes.data() + bf::batch_length_at);
  if (length < static_cast<int32_t>(bf::header_size - bf::log_overhead))
    return corrupt(fmt::format("batch length {} at batch offset {} is below the {} bytes of header "
                               "that follow it",
                               length, bf::batch_length_at, bf::header_size - bf::log_overhead));
  return static_cast<size_t>(length) + bf::log_overhead;
}

result<record_batch_view> record_batch_view::parse(bytes_view bytes, size_t max_batch_bytes,
                                                   batch_validation mode,
                                                   const std::optional<timestamp_bounds>& bounds,
                                                   crc_check crc) {
  auto framed = frame_size(bytes);
  if (!framed) return framed.err();
  const size_t size = *framed;
  if (size > bytes.size())
    return corrupt(
        fmt::format("batch truncated: its length field (batch offset {}) frames {} bytes, "
                    "only {} are present",
                    bf::batch_length_at, size, bytes.size()));
  if (size > max_batch_bytes)
    return make_error(
        errc::message_too_large,
        fmt::format("batch of {} bytes exceeds the maximum of {} bytes", size, max_batch_bytes));
  const bytes_view batch = bytes.first(size);
  const uint8_t* d = batch.data();

  const auto magic = static_cast<int8_t>(d[bf::magic_at]);
  if (magic != bf::magic_v2)
    return corrupt(fmt::format("magic byte at batch offset {} is {}, expected {}", bf::magic_at,
                               magic, bf::magic_v2));

  if (crc == crc_check::verify) {
    const auto stored_crc = bf::load_be<uint32_t>(d + bf::crc_at);
    const uint32_t computed_crc = crc32c(batch.subspan(bf::attributes_at));
    if (stored_crc != computed_crc)
      return corrupt(fmt::format("CRC-32C mismatch: stored 0x{:08X} at batch offset {}, computed "
                                 "0x{:08X} over batch offsets [{}, {})",
                                 stored_crc, bf::crc_at, computed_crc, bf::attributes_at, size));
  }

  const auto attributes = bf::load_be<int16_t>(d + bf::attributes_at);
  const auto codec = compression_from_attributes(attributes);
  if (!codec)
    return make_error(errc::unsupported_compression_type,
                      fmt::format("codec {} in attributes 0x{:04X} at batch offset {} is none of "
                                  "Kafka's (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd)",
                                  attributes & bf::compression_mask,
                                  static_cast<uint16_t>(attributes), bf::attributes_at));

  const bool produce = mode == batch_validation::produce;
  const bool log_append_time = (attributes & bf::timestamp_type_mask) != 0;
  // Kafka's LogValidator refuses a LogAppendTime batch from a producer on a CreateTime topic
  // whose records carry no timestamp and rewrites the type otherwise; a producer never sets it,
  // so capstan refuses it outright rather than re-checksum a batch it should not have received.
  if (produce && log_append_time)
    return invalid_timestamp(fmt::format("attributes 0x{:04X} at batch offset {} set the "
                                         "LogAppendTime timestamp type: only the broker sets it",
                                         static_cast<uint16_t>(attributes), bf::attributes_at));

  const auto last_offset_delta = bf::load_be<int32_t>(d + bf::last_offset_delta_at);
  const auto count = bf::load_be<int32_t>(d + bf::records_count_at);
  if (count < 0)
    return corrupt(
        fmt::format("record count {} at batch offset {} is negative", count, bf::records_count_at));
  if (last_offset_delta < 0)
    return corrupt(fmt::format("last offset delta {} at batch offset {} is negative",
                               last_offset_delta, bf::last_offset_delta_at));
  // Every reader computes the last offset as base + delta; a base past the int64 range that
  // leaves would make that overflow. A leader overwrites a produced base, but the same bound
  // holds for it: no producer has a reason to send a negative or near-int64-max base offset.
  const auto base_offset = bf::load_be<int64_t>(d + bf::base_offset_at);
  if (base_offset < 0 || base_offset > std::numeric_limits<int64_t>::max() - last_offset_delta)
    return corrupt(fmt::format("base offset {} at batch offset {} with last offset delta {} "
                               "leaves the offset range [0, 2^63)",
                               base_offset, bf::base_offset_at, last_offset_delta));
  const int64_t offsets_covered = int64_t{last_offset_delta} + 1;
  if (produce) {
    // Kafka's LogValidator: InvalidRecordException for an inconsistent offset range or count.
    if (count == 0)
      return make_error(errc::invalid_record,
                        fmt::format("produced batch has no records (count at batch offset {})",
                                    bf::records_count_at));
    if (count != offsets_covered)
      return make_error(errc::invalid_record,
                        fmt::format("produced batch has {} records (batch offset {}) but last "
                                    "offset delta {} (batch offset {}) implies {}",
                                    count, bf::records_count_at, last_offset_delta,
                                    bf::last_offset_delta_at, offsets_covered));
  } else if (count > offsets_covered) {
    return corrupt(
        fmt::format("record count {} at batch offset {} exceeds the {} offsets that last "
                    "offset delta {} covers",
                    count, bf::records_count_at, offsets_covered, last_offset_delta));
  }

  const auto base_timestamp = bf::load_be<int64_t>(d + bf::base_timestamp_at);
  // Kafka's window ends, as LogValidator.validateTimestamp computes them, without its overflow.
  const bool check_window = produce && bounds.has_value();
  const timestamp_ms earliest =
    check_window ? saturating_sub(bounds->now, bounds->before_max_ms) : 0;
  const timestamp_ms latest = check_window ? saturating_add(bounds->now, bounds->after_max_ms) : 0;
  timestamp_ms max_record_timestamp = no_timestamp;

  // A compressed batch's records are checked as an uncompressed one's, in their decompressed
  // bytes (Kafka's LogValidator does the same); positions in messages are then offsets within
  // those bytes.
  std::shared_ptr<const capstan::bytes> decompressed;
  if (*codec != compression::none) {
    auto inflated =
        decompress(*codec, batch.subspan(bf::records_at), bf::max_decompressed_records_bytes);
    if (!inflated) return inflated.err();
    decompressed = std::make_shared<const capstan::bytes>(std::move(inflated).value());
  }
  const bytes_view area = decompressed ? bytes_view(*decompressed) : batch;
  const std::string_view offset_in = decompressed ? "decompressed offset" : "batch offset";

  const status records_valid = [&]() -> status {
    size_t pos = decompressed ? 0 : bf::records_at;
    int32_t previous_delta = -1;
    record_view scratch;
    for (int32_t i = 0; i < count; ++i) {
      const size_t record_at = pos;
      if (pos >= area.size())
        return corrupt(fmt::format("records end at {} {} after {} of its {} records", offset_in,
                                   area.size(), i, count));
      record_fault fault;
      if (!decode_record<false>(area, pos, scratch, fault))
        return corrupt(describe(fault, i, record_at));
      if (!log_append_time) {
        timestamp_ms ts = 0;
        if (__builtin_add_overflow(base_timestamp, scratch.timestamp_delta, &ts)) {
          auto message = fmt::format(
              "record {} at batch offset {}: base timestamp {} (batch offset "
              "{}) + timestamp delta {} overflows int64",
              i, record_at, base_timestamp, bf::base_timestamp_at, scratch.timestamp_delta);
          return produce ? invalid_timestamp(std::move(message)) : corrupt(std::move(message));
        }
        if (check_window && ts != no_timestamp && (ts < earliest || ts > latest))
          return invalid_timestamp(fmt::format(
              "record {} at batch offset {} has timestamp {}, out of range: it must be within [{}, "
              "{}] (message.timestamp.before.max.ms {}, message.timestamp.after.max.ms {})",
              i, record_at, ts, earliest, latest, bounds->before_max_ms, bounds->after_max_ms));
        max_record_timestamp = std::max(max_record_timestamp, ts);
      }
      const int32_t delta = scratch.offset_delta;
      if (produce) {
        if (delta != i)
          return make_error(
              errc::invalid_record,
              fmt::format("record {} at batch offset {} has offset delta {}, expected {}", i,
                          record_at, delta, i));
      } else if (delta <= previous_delta || delta > last_offset_delta) {
        return corrupt(fmt::format("record {} at batch offset {} has offset delta {}: deltas must "
                                   "increase (previous {}) and stay within last offset delta {}",
                                   i, record_at, delta, previous_delta, last_offset_delta));
      }
      previous_delta = delta;
    }
    if (pos != area.size())
      return corrupt(fmt::format("{} trailing bytes at {} {} after the last of {} records",
                                 area.size() - pos, offset_in, pos, count));
    return {};
  }();
  if (!records_valid) {
    if (!decompressed) return records_valid.err();
    auto e = records_valid.err();
    e.message = fmt::format("in the {} records (a record's batch offset is its offset in the "
                            "decompressed bytes): {}",
                            to_string(*codec), e.message);
    return e;
  }
  // Retention and time lookups go by the header's max timestamp, so a produced one must be what
  // the records say (Kafka's LogValidator rewrites it; capstan refuses, keeping the producer's
  // bytes and CRC as sent).
  if (const auto header_max = bf::load_be<int64_t>(d + bf::max_timestamp_at);
      produce && header_max != max_record_timestamp)
    return invalid_timestamp(fmt::format("max timestamp {} at batch offset {} is not the largest "
                                         "record timestamp, {}",
                                         header_max, bf::max_timestamp_at, max_record_timestamp));
  return record_batch_view(batch, std::move(decompressed));
}

offset record_batch_view::base_offset() const {
  return offset{bf::load_be<int64_t>(data_.data() + bf::base_offset_at)};
}
int32_t record_batch_view::last_offset_delta() const {
  return bf::load_be<int32_t>(data_.data() + bf::last_offset_delta_at);
}
leader_epoch record_batch_view::partition_leader_epoch() const {
  return leader_epoch{bf::load_be<int32_t>(data_.data() + bf::partition_leader_epoch_at)};
}
int16_t record_batch_view::attributes() const {
  return bf::load_be<int16_t>(data_.data() + bf::attributes_at);
}
timestamp_ms record_batch_view::base_timestamp() const {
  return bf::load_be<int64_t>(data_.data() + bf::base_timestamp_at);
}
timestamp_ms record_batch_view::max_timestamp() const {
  return bf::load_be<int64_t>(data_.data() + bf::max_timestamp_at);
}
int64_t record_batch_view::producer_id() const {
  return bf::load_be<int64_t>(data_.data() + bf::producer_id_at);
}
int16_t record_batch_view::producer_epoch() const {
  return bf::load_be<int16_t>(data_.data() + bf::producer_epoch_at);
}
int32_t record_batch_view::base_sequence() const {
  return bf::load_be<int32_t>(data_.data() + bf::base_sequence_at);
}
int32_t record_batch_view::record_count() const {
  return bf::load_be<int32_t>(data_.data() + bf::records_count_at);
}
uint32_t record_batch_view::crc() const { return bf::load_be<uint32_t>(data_.data() + bf::crc_at); }
compression record_batch_view::codec() const {
  return static_cast<compression>(attributes() & bf::compression_mask);
}
bytes_view record_batch_view::records() const {
  return decompressed_ ? bytes_view(*decompressed_) : data_.subspan(bf::records_at);
}
bool record_batch_view::is_control() const { return (attributes() & bf::control_mask) != 0; }
bool record_batch_view::is_log_append_time() const {
  return (attributes() & bf::timestamp_type_mask) != 0;
}

timestamp_ms record_batch_view::timestamp_of(const record_view& r) const {
  if (is_log_append_time()) return max_timestamp();
  timestamp_ms ts = 0;
  [[maybe_unused]] const bool overflow =
    __builtin_add_overflow(base_timestamp(), r.timestamp_delta, &ts);
  assert(!overflow && "parse refuses a record whose timestamp overflows");
  return ts;
}

bool record_batch_view::next_record(size_t& pos, record_view& out) const {
  const bytes_view area = decompressed_ ? bytes_view(*decompressed_) : data_;
  if (!decompressed_ && pos < bf::records_at) pos = bf::records_at;
  if (pos >= area.size()) return false;
  record_fault fault;
  const bool ok = decode_record<true>(area, pos, out, fault);
  assert(ok && "record_batch_view holds only validated batches");
  return ok;
}

namespace {

// The validated batch at the front of `batch`, or an empty span when the frame does not fit.
std::span<uint8_t> own_frame(std::span<uint8_t> batch) {
  auto size = record_batch_view::frame_size(batch);
  assert(size && *size <= batch.size() && "REQUIRES: batch holds a validated batch");
  if (!size || *size > batch.size()) return {};
  return batch.first(*size);
}

} // namespace

void set_base_offset(std::span<uint8_t> batch, offset base) {
  auto frame = own_frame(batch);
  if (!frame.empty()) bf::store_be<int64_t>(frame.data() + bf::base_offset_at, base.value());
}

void set_partition_leader_epoch(std::span<uint8_t> batch, leader_epoch epoch) {
  auto frame = own_frame(batch);
  if (!frame.empty())
    bf::store_be<int32_t>(frame.data() + bf::partition_leader_epoch_at, epoch.value());
}

void set_log_append_time(std::span<uint8_t> batch, timestamp_ms now) {
  auto frame = own_frame(batch);
  if (frame.empty()) return;
  uint8_t* d = frame.data();
  const auto attributes = bf::load_be<int16_t>(d + bf::attributes_at);
  bf::store_be<int16_t>(d + bf::attributes_at,
                        static_cast<int16_t>(attributes | bf::timestamp_type_mask));
  bf::store_be<int64_t>(d + bf::max_timestamp_at, now);
  bf::store_be<uint32_t>(d + bf::crc_at, crc32c(bytes_view(frame).subspan(bf::attributes_at)));
}

void set_producer(std::span<uint8_t> batch, int64_t producer_id, int16_t epoch,
                  int32_t base_sequence) {
  auto frame = own_frame(batch);
  if (frame.empty()) return;
  uint8_t* d = frame.data();
  bf::store_be<int64_t>(d + bf::producer_id_at, producer_id);
  bf::store_be<int16_t>(d + bf::producer_epoch_at, epoch);
  bf::store_be<int32_t>(d + bf::base_sequence_at, base_sequence);
  bf::store_be<uint32_t>(d + bf::crc_at, crc32c(bytes_view(frame).subspan(bf::attributes_at)));
}

result<std::optional<record_batch_view>> batch_sequence_reader::next() {
  // Padding after the previous batch: up to the next multiple of 8, or the end of the sequence
  // (the last batch needs no padding after it).
  const size_t padded_end = std::min(bf::align_up(pos_), bytes_.size());
  for (size_t i = pos_; i < padded_end; ++i)
    if (bytes_[i] != 0)
      return corrupt(fmt::format("non-zero padding byte 0x{:02X} at sequence position {} (padding "
                                 "after the batch that ends at {})",
                                 bytes_[i], i, pos_));
  pos_ = padded_end;
  if (pos_ == bytes_.size()) return std::optional<record_batch_view>{};
  auto view =
      record_batch_view::parse(bytes_.subspan(pos_), max_batch_bytes_, mode_, bounds_, crc_);
  if (!view) {
    auto e = view.err();
    e.message = fmt::format("batch at sequence position {}: {}", pos_, e.message);
    return e;
  }
  pos_ += view->size_bytes();
  return std::optional<record_batch_view>{*view};
}

} // namespace capstan
