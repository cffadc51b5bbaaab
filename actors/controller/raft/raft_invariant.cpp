#include "actors/controller/raft/raft_invariant.hpp"

#include <cstdio>
#include <cstdlib>

namespace capstan::raft {

void invariant_failed(const char* file, int line, const char* condition,
                      const std::string& detail) {
  std::fprintf(stderr, "%s:%d: raft invariant failed: %s (%s)\n", file, line, condition,
               detail.c_str());
  std::fflush(stderr);
  std::abort();
}

} // namespace capstan::raft
