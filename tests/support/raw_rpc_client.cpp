#include "tests/support/raw_rpc_client.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include <capnp/message.h>
#include <capnp/rpc.capnp.h>
#include <capnp/schema.h>
#include <capnp/serialize.h>
#include <kj/exception.h>

#include "schema/client.capnp.h"

namespace capstan::test {

namespace {

// Writes one message; false if the write failed or timed out.
bool write_message(int fd, capnp::MessageBuilder& message) {
  bool ok = true;
  KJ_IF_MAYBE (e, kj::runCatchingExceptions([&] { capnp::writeMessageToFd(fd, message); })) {
    (void)e;
    ok = false;
  }
  return ok;
}

// A Call of Capstan method `method` on the bootstrap's answer (question 0).
template <class Params>
typename Params::Builder init_call(capnp::MessageBuilder& message, uint32_t question,
                                   uint16_t method) {
  auto call = message.initRoot<capnp::rpc::Message>().initCall();
  call.setQuestionId(question);
  call.initTarget().initPromisedAnswer().setQuestionId(0);
  call.setInterfaceId(capnp::typeId<rpc::Capstan>());
  call.setMethodId(method);
  return call.initParams().getContent().template initAs<Params>();
}

uint16_t method_ordinal(const char* name) {
  return capnp::Schema::from<rpc::Capstan>().getMethodByName(name).getOrdinal();
}

} // namespace

int connect_loopback(uint16_t port, int receive_buffer) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  if (receive_buffer > 0)
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool closed_by_peer(int fd, std::chrono::milliseconds timeout) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return false;
  char byte = 0;
  const auto n = ::recv(fd, &byte, 1, MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

int64_t rss_kib(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) != 0) continue;
    std::istringstream fields(line.substr(6));
    int64_t kib = -1;
    fields >> kib;
    return kib;
  }
  return -1;
}

raw_rpc_client::raw_rpc_client(uint16_t port, std::chrono::milliseconds send_timeout,
                               int receive_buffer)
    : fd_(connect_loopback(port, receive_buffer)) {
  if (fd_ < 0) return;
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(send_timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((send_timeout.count() % 1000) * 1000);
  ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

raw_rpc_client::~raw_rpc_client() {
  if (fd_ >= 0) ::close(fd_);
}

size_t raw_rpc_client::discard_answers(std::chrono::milliseconds quiet) {
  size_t total = 0;
  char buf[65536];
  for (;;) {
    pollfd p{fd_, POLLIN, 0};
    if (fd_ < 0 || ::poll(&p, 1, static_cast<int>(quiet.count())) <= 0) return total;
    const auto n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
    if (n <= 0) return total;
    total += static_cast<size_t>(n);
  }
}

bool raw_rpc_client::send_bootstrap() {
  if (fd_ < 0 || failed_) return false;
  capnp::MallocMessageBuilder message;
  message.initRoot<capnp::rpc::Message>().initBootstrap().setQuestionId(0);
  failed_ = !write_message(fd_, message);
  return !failed_;
}

bool raw_rpc_client::send_produce(const std::string& topic, int32_t partition, int16_t acks,
                                  int32_t timeout_ms, const bytes& records) {
  if (fd_ < 0 || failed_) return false;
  static const uint16_t produce = method_ordinal("produce");
  capnp::MallocMessageBuilder message(static_cast<unsigned>(records.size() / 8 + 64));
  auto params = init_call<rpc::Capstan::ProduceParams>(message, next_question_++, produce);
  params.setTopic(topic);
  params.setPartition(partition);
  params.setAcks(acks);
  params.setTimeoutMs(timeout_ms);
  params.setRecords(capnp::Data::Reader(records.data(), records.size()));
  failed_ = !write_message(fd_, message);
  return !failed_;
}

bool raw_rpc_client::send_fetch(const std::string& topic, int32_t partition, int64_t offset,
                                int32_t max_bytes, int32_t min_bytes, int32_t max_wait_ms) {
  if (fd_ < 0 || failed_) return false;
  static const uint16_t fetch = method_ordinal("fetch");
  capnp::MallocMessageBuilder message;
  auto params = init_call<rpc::Capstan::FetchParams>(message, next_question_++, fetch);
  params.setTopic(topic);
  params.setPartition(partition);
  params.setOffset(offset);
  params.setMaxBytes(max_bytes);
  params.setMinBytes(min_bytes);
  params.setMaxWaitMs(max_wait_ms);
  failed_ = !write_message(fd_, message);
  return !failed_;
}

} // namespace capstan::test
