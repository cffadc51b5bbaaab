#include "tests/support/free_port.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <random>

#include "tests/support/test_failure.hpp"

namespace capstan::test {

namespace {

// True when `port` (0: any) binds on 127.0.0.1; sets `port` to the one bound.
bool binds(uint16_t& port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  require(fd >= 0, "no socket for a free port");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  const bool bound = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  socklen_t len = sizeof addr;
  if (bound)
    require(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0, "getsockname failed");
  ::close(fd);
  port = ntohs(addr.sin_port);
  return bound;
}

// The lowest ephemeral port; Linux's default when the file cannot be read.
int ephemeral_low() {
  int low = 32768;
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> low;
  return low;
}

} // namespace

uint16_t free_port() {
  constexpr int lowest = 10000;
  static const int below = ephemeral_low();
  thread_local std::mt19937 rng{std::random_device{}()};
  if (below > lowest + 1000) {
    std::uniform_int_distribution<int> pick(lowest, below - 1);
    for (int attempt = 0; attempt < 100; ++attempt) {
      auto port = static_cast<uint16_t>(pick(rng));
      if (binds(port)) return port;
    }
  }
  uint16_t any = 0;
  require(binds(any), "no free port on 127.0.0.1");
  return any;
}

} // namespace capstan::test
