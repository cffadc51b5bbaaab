#pragma once

// RAFT_INVARIANT(cond, detail): a broken invariant or precondition of the Raft core stops the
// process with the values that broke it. Always on, whatever NDEBUG says: a consensus core that
// goes on after one can corrupt the metadata log of the whole cluster.

#include <string>

namespace capstan::raft {

[[noreturn]] void invariant_failed(const char* file, int line, const char* condition,
                                   const std::string& detail);

} // namespace capstan::raft

#define RAFT_INVARIANT(cond, detail)                                                               \
  do {                                                                                             \
    if (!(cond)) ::capstan::raft::invariant_failed(__FILE__, __LINE__, #cond, (detail));           \
  } while (false)
