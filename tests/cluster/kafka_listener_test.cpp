// The Kafka listener's framing over real sockets on 127.0.0.1 (actors/gateway/kafka/
// kafka_connection): answers in request order with their correlation ids, a frame that arrives
// in pieces, and a closed connection (never a crash, never a wait for bytes that will not come)
// for an absurd or negative size and an API that is not offered.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <optional>
#include <vector>

#include <catch2/catch.hpp>

#include "actors/gateway/rpc_server.hpp"
#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/frame.hpp"
#include "runtime/kafka/message_codec.hpp"
#include "runtime/kafka/message_header.hpp"
#include "tests/support/caf_fixture.hpp"

using namespace capstan;

namespace {

struct kafka_fixture {
  test::threaded_system ts;
  std::unique_ptr<rpc_server> server;

  kafka_fixture() {
    auto started = rpc_server::start(ts.sys(), rpc_targets{}, "127.0.0.1", 0, rpc_limits{},
                                     kafka_listen_address{"127.0.0.1", 0});
    REQUIRE(started.ok());
    server = std::move(*started);
    REQUIRE(server->kafka_port() != 0);
  }
  ~kafka_fixture() { server->stop(); }
};

// A client socket with a bounded receive wait.
class client {
public:
  explicit client(uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    REQUIRE(fd_ >= 0);
    timeval bound{10, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &bound, sizeof bound);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  }
  client(const client&) = delete;
  client& operator=(const client&) = delete;
  ~client() { ::close(fd_); }

  void send(const bytes& b) {
    REQUIRE(::send(fd_, b.data(), b.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(b.size()));
  }

  // The next response frame's contents; nullopt when the server closed the connection first.
  std::optional<bytes> next_frame() {
    while (true) {
      auto cut = kafka::next_frame(buffer_, 1 << 20);
      REQUIRE(cut.ok());
      if (cut->consumed != 0) {
        bytes out(cut->frame.begin(), cut->frame.end());
        buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<long>(cut->consumed));
        return out;
      }
      uint8_t chunk[4096];
      const auto n = ::recv(fd_, chunk, sizeof chunk, 0);
      REQUIRE(n >= 0); // a timeout (-1) fails the test: the bound is 10 s
      if (n == 0) return std::nullopt;
      buffer_.insert(buffer_.end(), chunk, chunk + n);
    }
  }

  // True once the server closed the connection (bounded by the receive wait).
  bool closed_by_server() {
    uint8_t chunk[4096];
    while (true) {
      const auto n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n == 0) return true;
      if (n < 0) return errno == ECONNRESET;
    }
  }

private:
  int fd_;
  bytes buffer_;
};

bytes api_versions_request(int16_t version, int32_t correlation_id) {
  bytes out;
  const auto at = kafka::begin_frame(out);
  auto body = kafka::make_message(kafka::api_versions_api, kafka::message_kind::request);
  REQUIRE(kafka::encode_request(
              kafka::request_header{kafka::api_key::api_versions, version, correlation_id, "t", {}},
              body, out)
              .ok());
  kafka::end_frame(out, at);
  return out;
}

bytes size_prefix(int32_t size) {
  const auto u = static_cast<uint32_t>(size);
  return bytes{static_cast<uint8_t>(u >> 24), static_cast<uint8_t>(u >> 16),
               static_cast<uint8_t>(u >> 8), static_cast<uint8_t>(u)};
}

kafka::response api_versions_response(const bytes& frame, int16_t version) {
  auto r = kafka::decode_response(kafka::api_versions_api, version, frame);
  REQUIRE(r.ok());
  return std::move(*r);
}

} // namespace

TEST_CASE("kafka listener answers pipelined requests in order with their correlation ids",
          "[gateway][kafka]") {
  kafka_fixture f;
  client c{f.server->kafka_port()};
  bytes three = api_versions_request(0, 1);
  for (const auto& next : {api_versions_request(3, 2), api_versions_request(2, 3)})
    three.insert(three.end(), next.begin(), next.end());
  c.send(three);
  const int16_t versions[] = {0, 3, 2};
  for (int32_t id = 1; id <= 3; ++id) {
    auto frame = c.next_frame();
    REQUIRE(frame);
    auto r = api_versions_response(*frame, versions[id - 1]);
    CHECK(r.correlation_id == id);
    CHECK(r.body["ErrorCode"].as_int() == 0);
  }
}

TEST_CASE("kafka listener reads a frame sent in pieces and serves others meanwhile",
          "[gateway][kafka]") {
  kafka_fixture f;
  client slow{f.server->kafka_port()};
  const auto whole = api_versions_request(1, 9);
  slow.send(bytes(whole.begin(), whole.begin() + 7));
  client other{f.server->kafka_port()};
  other.send(api_versions_request(1, 10));
  auto answer = other.next_frame();
  REQUIRE(answer);
  CHECK(api_versions_response(*answer, 1).correlation_id == 10);
  slow.send(bytes(whole.begin() + 7, whole.end()));
  auto late = slow.next_frame();
  REQUIRE(late);
  CHECK(api_versions_response(*late, 1).correlation_id == 9);
}

TEST_CASE("kafka listener closes a connection that announces an absurd or negative size",
          "[gateway][kafka]") {
  kafka_fixture f;
  for (int32_t size : {0x7fffffff, -5}) {
    INFO(size);
    client c{f.server->kafka_port()};
    c.send(size_prefix(size));
    CHECK(c.closed_by_server());
  }
  client after{f.server->kafka_port()};
  after.send(api_versions_request(0, 1));
  CHECK(after.next_frame().has_value());
}

TEST_CASE("kafka listener closes a connection for an API key it does not offer",
          "[gateway][kafka]") {
  kafka_fixture f;
  client c{f.server->kafka_port()};
  // Header v1 of API key 999: key, version, correlation id, null client id.
  const bytes unknown{0x03, 0xe7, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0xff, 0xff};
  bytes framed = size_prefix(static_cast<int32_t>(unknown.size()));
  framed.insert(framed.end(), unknown.begin(), unknown.end());
  c.send(framed);
  CHECK(c.closed_by_server());
}

TEST_CASE("kafka listener answers an ApiVersions version it does not know in v0 form",
          "[gateway][kafka]") {
  kafka_fixture f;
  client c{f.server->kafka_port()};
  // ApiVersions v7: header v2 (a flexible version), with an empty tagged-fields section.
  const bytes request{0x00, 0x12, 0x00, 0x07, 0x00, 0x00, 0x00, 0x2a, 0xff, 0xff, 0x00};
  bytes framed = size_prefix(static_cast<int32_t>(request.size()));
  framed.insert(framed.end(), request.begin(), request.end());
  c.send(framed);
  auto frame = c.next_frame();
  REQUIRE(frame);
  auto r = api_versions_response(*frame, 0);
  CHECK(r.correlation_id == 42);
  CHECK(r.body["ErrorCode"].as_int() == 35);
}
