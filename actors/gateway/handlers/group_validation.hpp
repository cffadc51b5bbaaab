#pragma once

// Checks the group handlers share (docs/protocol.md, "Validation").

#include <string>

#include "actors/group/group_coordinator_actor.hpp"
#include "runtime/result.hpp"

namespace capstan {

// The first bad field of a member's identity, if any.
status validate_member(const std::string& group, const std::string& member,
                       const std::string& instance);

// Checks every entry's topic and partition; the first bad one fails the whole request.
status validate_group_entries(const group_offsets& entries);

} // namespace capstan
