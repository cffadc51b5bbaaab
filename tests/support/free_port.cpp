#include "tests/support/free_port.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <mutex>
#include <random>
#include <set>

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
  // Every port handed out before, by any thread: a node not yet started leaves its port free,
  // so a second random pick could name it again (it did: two voters of one cluster got the same
  // port, and the cluster refused to start).
  static std::mutex mu;
  static std::set<uint16_t> given;
  std::lock_guard lock(mu);
  thread_local std::mt19937 rng{std::random_device{}()};
  if (below > lowest + 1000) {
    std::uniform_int_distribution<int> pick(lowest, below - 1);
    for (int attempt = 0; attempt < 1000; ++attempt) {
      auto port = static_cast<uint16_t>(pick(rng));
      if (given.count(port) == 0 && binds(port)) {
        given.insert(port);
        return port;
      }
    }
  }
  for (int attempt = 0; attempt < 100; ++attempt) {
    uint16_t any = 0;
    require(binds(any), "no free port on 127.0.0.1");
    if (given.insert(any).second) return any;
  }
  require(false, "no free port on 127.0.0.1 that was not handed out already");
  return 0;
}

} // namespace capstan::test
