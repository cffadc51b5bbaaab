#pragma once

// A Kafka client over a blocking socket that writes requests with capstan's own codec
// (runtime/kafka) and reads response frames, every wait bounded. Tests use it where no Kafka
// client library here sends the request (DeleteTopics v6 by topic id, CreateTopics v7), and to
// pipeline requests without reading the answers, as a broken or hostile client does.

#include <chrono>
#include <cstdint>

#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/message_header.hpp"
#include "runtime/result.hpp"
#include "runtime/types.hpp"

namespace capstan::test {

class raw_kafka_client {
public:
  // Connects to 127.0.0.1:`port`. A write gives up after `send_timeout` without progress
  // (SO_SNDTIMEO), so a server that stops reading makes send() return false instead of blocking;
  // a read gives up after `receive_timeout` (SO_RCVTIMEO).
  raw_kafka_client(uint16_t port, std::chrono::milliseconds send_timeout,
                   std::chrono::milliseconds receive_timeout);
  ~raw_kafka_client();
  raw_kafka_client(const raw_kafka_client&) = delete;
  raw_kafka_client& operator=(const raw_kafka_client&) = delete;

  bool connected() const { return fd_ >= 0; }

  // Sends `body` as a request of `api` at `version` with `correlation_id`, client id "raw".
  // False once a write failed or timed out; after that the stream may end inside a frame, and
  // every later call returns false.
  bool send(const kafka::api_schema& api, int16_t version, int32_t correlation_id,
            const kafka::struct_value& body);

  // The next response frame, decoded as `api` at `version`. NETWORK_EXCEPTION if the connection
  // closed or nothing came within the receive timeout; the codec's error if it does not decode.
  result<kafka::response> receive(const kafka::api_schema& api, int16_t version);

private:
  int fd_ = -1;
  bool failed_ = false;
  bytes buffer_;
};

} // namespace capstan::test
