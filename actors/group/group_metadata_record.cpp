#include "actors/group/group_metadata_record.hpp"

#include "runtime/group/record_fields.hpp"

namespace capstan {

namespace {

error corrupt(std::string what) {
  return make_error(errc::corrupt_message, "__consumer_offsets group record: " + std::move(what));
}

} // namespace

bytes encode_group_metadata_key(std::string_view group) {
  record_fields::writer w;
  w.put<int16_t>(2);
  w.put_string(group);
  return w.take();
}

bytes encode_group_metadata_value(const group_metadata_value& value) {
  record_fields::writer w;
  w.put<int16_t>(3);
  w.put_string(value.protocol_type);
  w.put<int32_t>(value.generation);
  w.put_nullable_string(value.protocol_name);
  w.put_nullable_string(value.leader);
  w.put<int64_t>(value.state_timestamp);
  w.put<int32_t>(static_cast<int32_t>(value.members.size()));
  for (const auto& m : value.members) {
    w.put_string(m.member_id);
    w.put_nullable_string(m.group_instance_id);
    w.put_string(m.client_id);
    w.put_string(m.client_host);
    w.put<int32_t>(m.rebalance_timeout_ms);
    w.put<int32_t>(m.session_timeout_ms);
    w.put_bytes(m.subscription);
    w.put_bytes(m.assignment);
  }
  return w.take();
}

result<std::optional<std::string>> decode_group_metadata_key(bytes_view data) {
  record_fields::reader r(data);
  const auto version = r.get<int16_t>();
  if (!r.ok()) return corrupt("key shorter than its version");
  if (version == 0 || version == 1) return std::optional<std::string>{};
  if (version != 2) return corrupt("unknown key version " + std::to_string(version));
  auto group = r.get_string();
  if (!r.ok()) return corrupt("truncated key");
  if (!r.at_end()) return corrupt("trailing bytes after the key");
  return std::optional<std::string>{std::move(group)};
}

result<group_metadata_value> decode_group_metadata_value(bytes_view data) {
  record_fields::reader r(data);
  const auto version = r.get<int16_t>();
  if (!r.ok()) return corrupt("value shorter than its version");
  if (version < 0 || version > 3) return corrupt("unknown value version " + std::to_string(version));
  group_metadata_value v;
  v.protocol_type = r.get_string();
  v.generation = r.get<int32_t>();
  v.protocol_name = r.get_nullable_string();
  v.leader = r.get_nullable_string();
  if (version >= 2) v.state_timestamp = r.get<int64_t>();
  const auto count = r.get<int32_t>();
  // Each member takes at least 18 bytes: a count past what is left is corrupt, not a reason to
  // reserve memory for it.
  if (!r.ok() || count < 0 || static_cast<size_t>(count) > data.size() / 18)
    return corrupt("bad member count " + std::to_string(count));
  for (int32_t i = 0; i < count && r.ok(); ++i) {
    group_metadata_member m;
    m.member_id = r.get_string();
    if (version >= 3) m.group_instance_id = r.get_nullable_string();
    m.client_id = r.get_string();
    m.client_host = r.get_string();
    m.rebalance_timeout_ms = version >= 1 ? r.get<int32_t>() : 0;
    m.session_timeout_ms = r.get<int32_t>();
    if (version == 0) m.rebalance_timeout_ms = m.session_timeout_ms;
    m.subscription = r.get_bytes();
    m.assignment = r.get_bytes();
    v.members.push_back(std::move(m));
  }
  if (!r.ok()) return corrupt("truncated value");
  if (!r.at_end()) return corrupt("trailing bytes after the value");
  return v;
}

} // namespace capstan
