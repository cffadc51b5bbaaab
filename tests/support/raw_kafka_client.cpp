#include "tests/support/raw_kafka_client.hpp"

#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "runtime/kafka/frame.hpp"
#include "tests/support/raw_rpc_client.hpp"

namespace capstan::test {

namespace {

timeval to_timeval(std::chrono::milliseconds d) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(d.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((d.count() % 1000) * 1000);
  return tv;
}

// The largest response frame read: far above anything these tests are answered with.
constexpr int32_t max_response_bytes = 64 << 20;

} // namespace

raw_kafka_client::raw_kafka_client(uint16_t port, std::chrono::milliseconds send_timeout,
                                   std::chrono::milliseconds receive_timeout)
    : fd_(connect_loopback(port)) {
  if (fd_ < 0) return;
  const auto snd = to_timeval(send_timeout);
  const auto rcv = to_timeval(receive_timeout);
  ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &snd, sizeof snd);
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &rcv, sizeof rcv);
}

raw_kafka_client::~raw_kafka_client() {
  if (fd_ >= 0) ::close(fd_);
}

bool raw_kafka_client::send(const kafka::api_schema& api, int16_t version, int32_t correlation_id,
                            const kafka::struct_value& body) {
  if (fd_ < 0 || failed_) return false;
  bytes frame;
  const auto at = kafka::begin_frame(frame);
  if (!kafka::encode_request(kafka::request_header{api.key, version, correlation_id, "raw", {}},
                             body, frame)
           .ok())
    return false;
  kafka::end_frame(frame, at);
  size_t sent = 0;
  while (sent < frame.size()) {
    const auto n = ::send(fd_, frame.data() + sent, frame.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) {
      failed_ = true;
      return false;
    }
    sent += static_cast<size_t>(n);
  }
  return true;
}

result<kafka::response> raw_kafka_client::receive(const kafka::api_schema& api, int16_t version) {
  if (fd_ < 0) return make_error(errc::network_exception, "not connected");
  while (true) {
    auto cut = kafka::next_frame(buffer_, max_response_bytes);
    if (!cut) return cut.err();
    if (cut->consumed != 0) {
      auto decoded = kafka::decode_response(api, version, cut->frame);
      buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<long>(cut->consumed));
      return decoded;
    }
    uint8_t chunk[65536];
    const auto n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n == 0) return make_error(errc::network_exception, "the server closed the connection");
    if (n < 0) return make_error(errc::network_exception, "no answer within the receive timeout");
    buffer_.insert(buffer_.end(), chunk, chunk + n);
  }
}

} // namespace capstan::test
