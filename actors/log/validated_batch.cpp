#include "actors/log/validated_batch.hpp"

#include <algorithm>
#include <limits>
#include <utility>

namespace capstan {

namespace {

// The window's ends as record_batch_view::parse computes them: saturated at the int64 range.
timestamp_ms earliest(const timestamp_bounds& b) {
  timestamp_ms out = 0;
  if (!__builtin_sub_overflow(b.now, b.before_max_ms, &out)) return out;
  return b.before_max_ms > 0 ? std::numeric_limits<int64_t>::min()
                             : std::numeric_limits<int64_t>::max();
}
timestamp_ms latest(const timestamp_bounds& b) {
  timestamp_ms out = 0;
  if (!__builtin_add_overflow(b.now, b.after_max_ms, &out)) return out;
  return b.after_max_ms > 0 ? std::numeric_limits<int64_t>::max()
                            : std::numeric_limits<int64_t>::min();
}

} // namespace

result<validated_batch> validated_batch::validate(bytes_view records, size_t max_batch_bytes) {
  auto owned = batch_buffer::of(bytes(records.begin(), records.end()));
  auto view = record_batch_view::parse(owned.view(), max_batch_bytes, batch_validation::produce);
  if (!view) return view.err();
  owned.end = owned.begin + view->size_bytes();
  return validated_batch(std::move(owned), *view);
}

validated_batch::validated_batch(batch_buffer buffer, record_batch_view view)
    : buffer_(std::move(buffer)), view_(view) {
  // parse refused LogAppendTime batches in produce mode, so every record has its CreateTime.
  view_.for_each_record([&](const record_view& r) {
    const timestamp_ms ts = view_.timestamp_of(r);
    if (ts == no_timestamp) return;
    min_timestamp_ = std::min(min_timestamp_.value_or(ts), ts);
    max_timestamp_ = std::max(max_timestamp_.value_or(ts), ts);
  });
}

bool validated_batch::within(const timestamp_bounds& bounds) const {
  if (!min_timestamp_) return true;
  return *min_timestamp_ >= earliest(bounds) && *max_timestamp_ <= latest(bounds);
}

} // namespace capstan
