#include "runtime/batch/record_batch_filter.hpp"

#include <cassert>
#include <cstring>

#include "runtime/batch/crc32c.hpp"
#include "runtime/batch/record_batch_format.hpp"
#include "runtime/batch/varint.hpp"

namespace capstan {

namespace bf = batch_format;

std::optional<bytes> filter_records(const record_batch_view& batch, const record_predicate& keep) {
  const bytes_view in = batch.records();
  bytes kept_records;
  kept_records.reserve(in.size());
  const offset base = batch.base_offset();
  int32_t kept = 0;
  // for_each_record decodes the records in file order; `pos` walks the same records by their
  // length prefix alone to find each one's raw byte span. The batch was validated, so every
  // length prefix decodes and fits.
  size_t pos = 0;
  batch.for_each_record([&](const record_view& r) {
    size_t body_at = pos;
    int32_t length = 0;
    const bool framed = decode_varint(in, body_at, length);
    assert(framed && length >= 0 && body_at + static_cast<size_t>(length) <= in.size());
    (void)framed;
    const size_t end = body_at + static_cast<size_t>(length);
    if (keep(r, base + r.offset_delta)) {
      kept_records.insert(kept_records.end(), in.begin() + static_cast<std::ptrdiff_t>(pos),
                          in.begin() + static_cast<std::ptrdiff_t>(end));
      ++kept;
    }
    pos = end;
  });
  if (kept == 0) return std::nullopt;

  const bytes_view header = batch.data().first(bf::header_size);
  bytes out(header.begin(), header.end());
  if (batch.codec() == compression::none) {
    out.insert(out.end(), kept_records.begin(), kept_records.end());
  } else {
    const bytes packed = compress(batch.codec(), kept_records);
    out.insert(out.end(), packed.begin(), packed.end());
  }

  uint8_t* d = out.data();
  bf::store_be<int32_t>(d + bf::batch_length_at,
                        static_cast<int32_t>(out.size() - bf::log_overhead));
  bf::store_be<int32_t>(d + bf::records_count_at, kept);
  bf::store_be<uint32_t>(d + bf::crc_at, crc32c(bytes_view(out).subspan(bf::attributes_at)));
  return out;
}

} // namespace capstan
