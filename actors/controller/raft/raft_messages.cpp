#include "actors/controller/raft/raft_messages.hpp"

namespace capstan::raft {

raft_term term_of(const message_body& body) {
  return std::visit([](const auto& m) { return m.term; }, body);
}

} // namespace capstan::raft
