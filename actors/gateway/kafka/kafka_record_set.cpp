#include "actors/gateway/kafka/kafka_record_set.hpp"

#include "runtime/batch/record_batch_format.hpp"

namespace capstan {

bytes unpadded_batches(bytes_view padded, size_t budget, bool at_least_one) {
  namespace fmt = batch_format;
  bytes out;
  out.reserve(padded.size());
  size_t pos = 0;
  while (pos + fmt::log_overhead <= padded.size()) {
    const uint8_t* at = padded.data() + pos + fmt::batch_length_at;
    const auto length = static_cast<int32_t>(uint32_t{at[0]} << 24 | uint32_t{at[1]} << 16 |
                                             uint32_t{at[2]} << 8 | uint32_t{at[3]});
    if (length < 0) break;
    const size_t end = pos + fmt::log_overhead + static_cast<size_t>(length);
    if (end > padded.size()) break;
    const size_t size = end - pos;
    if (out.size() + size > budget && !(out.empty() && at_least_one)) break;
    out.insert(out.end(), padded.begin() + static_cast<long>(pos),
               padded.begin() + static_cast<long>(end));
    pos = fmt::align_up(end);
  }
  return out;
}

} // namespace capstan
