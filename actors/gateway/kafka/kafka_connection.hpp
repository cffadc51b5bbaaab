#pragma once

// One Kafka client connection (docs/kafka.md, "The listener"): it cuts size-prefixed request
// frames off what it reads, routes each (kafka_request_router.hpp), and writes the responses in
// the order their requests came, as Kafka's clients expect, whatever order the handlers finish in.
//
// What a connection can make the node hold is bounded: a frame above socket.request.max.bytes
// closes the connection as soon as its size is read; reading pauses while the bytes of its
// requests read but not yet answered are above queued.max.request.bytes.per.connection (so it
// holds at most that plus one request, as Cap'n Proto's flow limit on the native side), while it
// has queued.max.responses.per.connection answers unsent, or while the node has
// queued.max.requests calls in flight (the native gateway's limits, rpc_limits.hpp).
//
// Threads: the gateway's kj thread only.

#include <cstdint>
#include <deque>

#include <kj/async-io.h>
#include <kj/timer.h>

#include "actors/gateway/service_context.hpp"
#include "runtime/kafka/message_header.hpp"
#include "runtime/types.hpp"

namespace capstan {

class kafka_connection {
public:
  // REQUIRES: `timer` outlives the connection.
  kafka_connection(kj::Own<kj::AsyncIoStream> socket, std::shared_ptr<service_context> ctx,
                   kj::Timer& timer);
  kafka_connection(const kafka_connection&) = delete;
  kafka_connection& operator=(const kafka_connection&) = delete;

  // Serves the connection until the peer closes it (once the answers due are written), a write
  // fails, or a request is one the listener closes connections for. Destroying the promise ends
  // the connection and cancels its calls.
  kj::Promise<void> run();

private:
  kj::Promise<void> read_loop();
  kj::Promise<void> write_loop();
  // Routes every whole frame in the buffer; false: the connection is to be closed.
  bool take_frames();
  // `request_bytes`: the size of the request frame `answer` answers, held until it is written.
  void queue_answer(kj::Promise<bytes> answer, size_t request_bytes);
  kj::Promise<bytes> dispatch(kafka::request req);
  bool requests_over_limit() const;
  bool backlogged() const;
  kj::Promise<void> drained();

  // An answer in request order, and the wire size of the request it answers.
  struct pending_answer {
    kj::Promise<bytes> answer;
    int64_t request_bytes = 0;
  };

  kj::Own<kj::AsyncIoStream> socket_;
  client_session session_;
  kj::Timer& timer_;
  bytes buffer_;
  size_t filled_ = 0;
  // Answers in request order, and the one being written; the writer waits on wake_ when empty.
  std::deque<pending_answer> answers_;
  int64_t unsent_ = 0;
  kj::Own<kj::PromiseFulfiller<void>> wake_;
  // The bytes of the requests read whose answers are not written yet (queued.max.request.bytes.
  // per.connection); the reader waits on room_ while they are over the limit.
  int64_t request_bytes_ = 0;
  kj::Own<kj::PromiseFulfiller<void>> room_;
};

} // namespace capstan
