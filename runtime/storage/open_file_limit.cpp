#include "runtime/storage/open_file_limit.hpp"

#include <cerrno>
#include <cstring>
#include <string>

#include <sys/resource.h>

namespace capstan {

result<open_file_limit> raise_open_file_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0)
    return make_error(errc::unknown_server_error,
                      std::string("getrlimit(RLIMIT_NOFILE): ") + std::strerror(errno));
  open_file_limit out{limit.rlim_cur, limit.rlim_cur, limit.rlim_max};
  if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= limit.rlim_max) return out;
  const rlim_t before = limit.rlim_cur;
  limit.rlim_cur = limit.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &limit) != 0)
    return make_error(errc::unknown_server_error,
                      "setrlimit(RLIMIT_NOFILE) from " + std::to_string(before) + " to " +
                          std::to_string(limit.rlim_max) + ": " + std::strerror(errno));
  out.soft_after = limit.rlim_max;
  return out;
}

} // namespace capstan
