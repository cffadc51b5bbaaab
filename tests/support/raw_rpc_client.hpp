#pragma once

// A client that speaks Cap'n Proto RPC by hand over a blocking socket: it sends Capstan calls and
// never reads the replies, as a broken or hostile client that pipelines does. Tests use it to see
// that a node stops reading such a client rather than buffering it without bound.

#include <chrono>
#include <cstdint>
#include <string>

#include "runtime/types.hpp"

namespace capstan::test {

class raw_rpc_client {
public:
  // Connects to 127.0.0.1:`port`; each later write gives up after `send_timeout` without progress
  // (SO_SNDTIMEO), so a server that stops reading makes send_* return false instead of blocking.
  // `receive_buffer` > 0 shrinks the socket's receive buffer (SO_RCVBUF), so that unread answers
  // pile up in the server rather than in this socket.
  raw_rpc_client(uint16_t port, std::chrono::milliseconds send_timeout, int receive_buffer = 0);
  ~raw_rpc_client();
  raw_rpc_client(const raw_rpc_client&) = delete;
  raw_rpc_client& operator=(const raw_rpc_client&) = delete;

  bool connected() const { return fd_ >= 0; }

  // Each returns false once a write failed or timed out; after that the stream may end in the
  // middle of a message, and every later call returns false.
  // Bootstrap (question 0): the calls below are made on its answer, pipelined.
  bool send_bootstrap();
  bool send_produce(const std::string& topic, int32_t partition, int16_t acks, int32_t timeout_ms,
                    const bytes& records);
  bool send_fetch(const std::string& topic, int32_t partition, int64_t offset, int32_t max_bytes,
                  int32_t min_bytes, int32_t max_wait_ms);

  // Reads and drops whatever the server sent, until nothing came for `quiet`; returns the bytes.
  size_t discard_answers(std::chrono::milliseconds quiet);

private:
  int fd_ = -1;
  bool failed_ = false;
  uint32_t next_question_ = 1;
};

// Opens a TCP connection to 127.0.0.1:`port` (with SO_RCVBUF = `receive_buffer` when > 0); -1
// if connect() fails.
int connect_loopback(uint16_t port, int receive_buffer = 0);

// True if the peer closed `fd` (EOF or reset) within `timeout`.
bool closed_by_peer(int fd, std::chrono::milliseconds timeout);

// The resident set size of process `pid` in KiB (VmRSS in /proc/<pid>/status), -1 if unreadable.
int64_t rss_kib(int pid);

} // namespace capstan::test
