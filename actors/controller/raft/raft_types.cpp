#include "actors/controller/raft/raft_types.hpp"

namespace capstan::raft {

std::string_view to_string(role r) {
  switch (r) {
  case role::follower:
    return "follower";
  case role::pre_candidate:
    return "pre-candidate";
  case role::candidate:
    return "candidate";
  case role::leader:
    return "leader";
  }
  return "unknown";
}

} // namespace capstan::raft
