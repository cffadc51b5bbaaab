#include "actors/group/offset_commit_record.hpp"

#include <cassert>

#include "runtime/group/record_fields.hpp"
#include "runtime/cluster/java_hash.hpp"

namespace capstan {

namespace {

using record_fields::reader;
using record_fields::writer;

error corrupt(std::string what) {
  return make_error(errc::corrupt_message, "__consumer_offsets record: " + std::move(what));
}

} // namespace

bytes encode_offset_commit_key(const offset_commit_key& key) {
  writer w;
  w.put<int16_t>(1);
  w.put_string(key.group);
  w.put_string(key.topic);
  w.put<int32_t>(key.partition);
  return w.take();
}

bytes encode_offset_commit_value(const offset_commit_value& value) {
  writer w;
  w.put<int16_t>(3);
  w.put<int64_t>(value.offset);
  w.put<int32_t>(value.leader_epoch);
  w.put_string(value.metadata);
  w.put<int64_t>(value.commit_timestamp);
  return w.take();
}

result<std::optional<offset_commit_key>> decode_offset_commit_key(bytes_view data) {
  reader r(data);
  const auto version = r.get<int16_t>();
  if (!r.ok()) return corrupt("key shorter than its version");
  if (version == 2) return std::optional<offset_commit_key>{};
  if (version != 0 && version != 1) return corrupt("unknown key version " + std::to_string(version));
  offset_commit_key key;
  key.group = r.get_string();
  key.topic = r.get_string();
  key.partition = r.get<int32_t>();
  if (!r.ok()) return corrupt("truncated key");
  if (!r.at_end()) return corrupt("trailing bytes after the key");
  return std::optional<offset_commit_key>{std::move(key)};
}

result<offset_commit_value> decode_offset_commit_value(bytes_view data) {
  reader r(data);
  const auto version = r.get<int16_t>();
  if (!r.ok()) return corrupt("value shorter than its version");
  if (version < 0 || version > 3) return corrupt("unknown value version " + std::to_string(version));
  offset_commit_value v;
  v.offset = r.get<int64_t>();
  if (version == 3) v.leader_epoch = r.get<int32_t>();
  v.metadata = r.get_string();
  v.commit_timestamp = r.get<int64_t>();
  if (version == 1) r.get<int64_t>(); // expire timestamp, unused since Kafka 2.1
  if (!r.ok()) return corrupt("truncated value");
  if (!r.at_end()) return corrupt("trailing bytes after the value");
  return v;
}

int32_t offsets_partition_for(std::string_view group, int32_t partitions) {
  assert(partitions >= 1);
  return kafka_abs(java_string_hash(group)) % partitions;
}

} // namespace capstan
