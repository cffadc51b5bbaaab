#include "actors/gateway/handlers/group_validation.hpp"

#include "actors/gateway/request_validation.hpp"

namespace capstan {

status validate_member(const std::string& group, const std::string& member,
                       const std::string& instance) {
  if (auto s = validate_group_id(group); !s) return s;
  if (auto s = validate_member_field(member, "member id"); !s) return s;
  return validate_member_field(instance, "group instance id");
}

status validate_group_entries(const group_offsets& entries) {
  for (const auto& e : entries)
    if (auto s = validate_topic_partition(e.topic, e.partition); !s) return s;
  return {};
}

} // namespace capstan
