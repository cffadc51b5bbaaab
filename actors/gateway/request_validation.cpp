#include "actors/gateway/request_validation.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "runtime/batch/record_batch_view.hpp"
#include "runtime/cluster/metadata.hpp"

namespace capstan {

namespace {

constexpr size_t max_group_id_bytes = 255;

error invalid(std::string message) {
  return make_error(errc::invalid_request, std::move(message));
}

} // namespace

status validate_topic_partition(const std::string& topic, int32_t partition) {
  if (auto s = validate_topic_name(topic); !s) return s;
  if (partition < 0)
    return make_error(errc::unknown_topic_or_partition,
                      fmt::format("partition {} of topic '{}' cannot exist: partitions are >= 0",
                                  partition, topic));
  return {};
}

status validate_list_length(size_t entries, const char* what) {
  if (entries <= max_request_list_entries) return {};
  return invalid(fmt::format("{} holds {} entries, at most {} allowed", what, entries,
                             max_request_list_entries));
}

status validate_acks(int16_t acks) {
  if (acks == 0 || acks == 1 || acks == -1) return {};
  return make_error(errc::invalid_required_acks,
                    fmt::format("acks must be 0, 1 or -1 (all), not {}", acks));
}

status validate_timeout(int32_t ms, const char* what) {
  if (ms >= 0) return {};
  return invalid(fmt::format("{} must be >= 0, not {}", what, ms));
}

result<validated_batch> validate_produce_records(bytes_view records, size_t max_batch_bytes) {
  if (records.empty()) return make_error(errc::corrupt_message, "produce carries no batch");
  auto batch = validated_batch::validate(records, max_batch_bytes);
  if (!batch) return batch.err();
  const size_t size = batch->size();
  const size_t padded = (size + 7) / 8 * 8;
  const auto rest = records.subspan(size);
  const bool only_padding = records.size() <= padded &&
                            std::all_of(rest.begin(), rest.end(), [](uint8_t b) { return b == 0; });
  if (!only_padding)
    return make_error(errc::corrupt_message,
                      fmt::format("a produce carries exactly one batch: {} bytes follow the "
                                  "batch of {} bytes (at most {} zero padding bytes allowed)",
                                  rest.size(), size, padded - size));
  return batch;
}

result<fetch_limits> validate_fetch(int64_t from, int32_t max_bytes, int32_t min_bytes,
                                    int32_t max_wait_ms, int32_t max_bytes_cap) {
  if (from < 0)
    return make_error(errc::offset_out_of_range,
                      fmt::format("fetch offset must be >= 0, not {}", from));
  if (max_bytes <= 0) return invalid(fmt::format("maxBytes must be > 0, not {}", max_bytes));
  if (min_bytes < 0) return invalid(fmt::format("minBytes must be >= 0, not {}", min_bytes));
  if (auto s = validate_timeout(max_wait_ms, "maxWaitMs"); !s) return s.err();
  return fetch_limits{offset{from}, std::min(max_bytes, max_bytes_cap), min_bytes, max_wait_ms};
}

status validate_list_offsets_timestamp(int64_t timestamp) {
  if (timestamp >= -2) return {};
  return invalid(fmt::format("timestamp must be -2 (earliest), -1 (latest) or a time >= 0, not {}",
                             timestamp));
}

status validate_group_id(const std::string& group) {
  if (group.empty()) return invalid("group id is empty");
  if (group.size() > max_group_id_bytes)
    return invalid(
        fmt::format("group id is {} bytes, at most {} allowed", group.size(), max_group_id_bytes));
  return {};
}

status validate_member_field(const std::string& value, const char* what) {
  if (value.size() > max_member_field_bytes)
    return invalid(fmt::format("{} is {} bytes, at most {} allowed", what, value.size(),
                               max_member_field_bytes));
  return {};
}

} // namespace capstan
