#include "actors/gateway/kafka/kafka_connection.hpp"

#include <algorithm>
#include <cstring>

#include "actors/gateway/handlers/metadata_handler.hpp"
#include "actors/gateway/kafka/kafka_create_partitions.hpp"
#include "actors/gateway/kafka/kafka_create_topics.hpp"
#include "actors/gateway/kafka/kafka_delete_groups.hpp"
#include "actors/gateway/kafka/kafka_delete_topics.hpp"
#include "actors/gateway/kafka/kafka_describe_configs.hpp"
#include "actors/gateway/kafka/kafka_describe_groups.hpp"
#include "actors/gateway/kafka/kafka_fetch.hpp"
#include "actors/gateway/kafka/kafka_find_coordinator.hpp"
#include "actors/gateway/kafka/kafka_heartbeat.hpp"
#include "actors/gateway/kafka/kafka_init_producer_id.hpp"
#include "actors/gateway/kafka/kafka_join_group.hpp"
#include "actors/gateway/kafka/kafka_leave_group.hpp"
#include "actors/gateway/kafka/kafka_list_groups.hpp"
#include "actors/gateway/kafka/kafka_list_offsets.hpp"
#include "actors/gateway/kafka/kafka_metadata_response.hpp"
#include "actors/gateway/kafka/kafka_offset_commit.hpp"
#include "actors/gateway/kafka/kafka_offset_fetch.hpp"
#include "actors/gateway/kafka/kafka_offsets_for_leader_epoch.hpp"
#include "actors/gateway/kafka/kafka_produce.hpp"
#include "actors/gateway/kafka/kafka_response_frame.hpp"
#include "actors/gateway/kafka/kafka_sync_group.hpp"
#include "actors/gateway/kafka/kafka_request_router.hpp"
#include "runtime/actor/logging.hpp"
#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/frame.hpp"

namespace capstan {

namespace {

// How much a read asks for at most; a frame larger than that is read in several.
constexpr size_t read_chunk = 64 * 1024;
// How often a held-back read looks again whether it may go on (as connection_stream).
constexpr auto hold_poll = 10 * kj::MILLISECONDS;

[[noreturn]] void fail_connection(const std::string& why) {
  kj::throwFatalException(
      kj::Exception(kj::Exception::Type::FAILED, __FILE__, __LINE__, kj::str(why.c_str())));
}

} // namespace

kafka_connection::kafka_connection(kj::Own<kj::AsyncIoStream> socket,
                                   std::shared_ptr<service_context> ctx, kj::Timer& timer)
    : socket_(kj::mv(socket)), session_(std::move(ctx)), timer_(timer) {}

kj::Promise<void> kafka_connection::run() {
  return read_loop().exclusiveJoin(write_loop());
}

bool kafka_connection::requests_over_limit() const {
  return request_bytes_ > session_.ctx->limits.queued_max_request_bytes_per_connection;
}

bool kafka_connection::backlogged() const {
  const auto& limits = session_.ctx->limits;
  return unsent_ >= limits.queued_max_responses_per_connection ||
         session_.ctx->calls_in_flight >= limits.queued_max_requests;
}

kj::Promise<void> kafka_connection::read_loop() {
  // Over the request-bytes limit only this connection's own answers make room: the writer wakes
  // the reader when one is written.
  if (requests_over_limit()) {
    auto paf = kj::newPromiseAndFulfiller<void>();
    room_ = kj::mv(paf.fulfiller);
    return paf.promise.then([this] { return read_loop(); });
  }
  if (backlogged()) return timer_.afterDelay(hold_poll).then([this] { return read_loop(); });
  // Whole frames already read go first (take_frames leaves them while over the limit); the socket
  // is read only once none is left, so a peer that sent everything and waits is still served.
  if (!take_frames()) return kj::READY_NOW;
  if (requests_over_limit()) return read_loop();
  if (buffer_.size() < filled_ + read_chunk) buffer_.resize(filled_ + read_chunk);
  return socket_->tryRead(buffer_.data() + filled_, 1, read_chunk)
      .then([this](size_t n) -> kj::Promise<void> {
        if (n == 0) return drained();
        filled_ += n;
        return read_loop();
      });
}

bool kafka_connection::take_frames() {
  const auto max = session_.ctx->limits.socket_request_max_bytes;
  size_t used = 0;
  bool open = true;
  while (open && !requests_over_limit()) {
    auto cut = kafka::next_frame(bytes_view{buffer_.data() + used, filled_ - used}, max);
    if (!cut) {
      get_logger("gateway")->debug("Kafka connection closed: {}", cut.err().to_string());
      open = false;
      break;
    }
    if (cut->consumed == 0) break;
    auto route = route_request(cut->frame);
    used += cut->consumed;
    switch (route.what) {
    case kafka_route::kind::answer:
      queue_answer(kj::Promise<bytes>(std::move(route.response)), cut->consumed);
      break;
    case kafka_route::kind::dispatch:
      queue_answer(dispatch(std::move(route.request)), cut->consumed);
      break;
    case kafka_route::kind::close:
      get_logger("gateway")->debug("Kafka connection closed: {}", route.why);
      open = false;
      break;
    }
  }
  std::memmove(buffer_.data(), buffer_.data() + used, filled_ - used);
  filled_ -= used;
  // A buffer grown for one large frame shrinks back once that frame is gone.
  if (buffer_.size() > 4 * read_chunk && filled_ < read_chunk) {
    buffer_.resize(read_chunk);
    buffer_.shrink_to_fit();
  }
  return open;
}

void kafka_connection::queue_answer(kj::Promise<bytes> answer, size_t request_bytes) {
  answers_.push_back(pending_answer{kj::mv(answer), static_cast<int64_t>(request_bytes)});
  ++unsent_;
  request_bytes_ += static_cast<int64_t>(request_bytes);
  if (wake_) {
    wake_->fulfill();
    wake_ = nullptr;
  }
}

kj::Promise<void> kafka_connection::write_loop() {
  if (answers_.empty()) {
    auto paf = kj::newPromiseAndFulfiller<void>();
    wake_ = kj::mv(paf.fulfiller);
    return paf.promise.then([this] { return write_loop(); });
  }
  auto next = kj::mv(answers_.front());
  answers_.pop_front();
  return next.answer
      .then([this](bytes frame) -> kj::Promise<void> {
        // Nothing to send: a produce with acks=0, which Kafka does not answer.
        if (frame.empty()) return kj::READY_NOW;
        auto written = socket_->write(frame.data(), frame.size());
        return written.attach(kj::mv(frame));
      })
      .then([this, request_bytes = next.request_bytes] {
        --unsent_;
        request_bytes_ -= request_bytes;
        if (room_ && !requests_over_limit()) {
          room_->fulfill();
          room_ = nullptr;
        }
        return write_loop();
      });
}

kj::Promise<void> kafka_connection::drained() {
  if (unsent_ == 0) return kj::READY_NOW;
  return timer_.afterDelay(hold_poll).then([this] { return drained(); });
}

kj::Promise<bytes> kafka_connection::dispatch(kafka::request req) {
  // route_request dispatches only offered APIs, and answers ApiVersions itself.
  switch (req.header.api_key) {
  case kafka::api_key::produce:
    return serve_produce(session_, std::move(req));
  case kafka::api_key::fetch:
    return serve_fetch(session_, std::move(req));
  case kafka::api_key::list_offsets:
    return serve_list_offsets(session_, std::move(req));
  case kafka::api_key::find_coordinator:
    return serve_kafka_find_coordinator(session_, std::move(req));
  case kafka::api_key::init_producer_id:
    return serve_init_producer_id(session_, std::move(req));
  case kafka::api_key::offset_commit:
    return serve_kafka_offset_commit(session_, std::move(req));
  case kafka::api_key::offset_fetch:
    return serve_kafka_offset_fetch(session_, std::move(req));
  case kafka::api_key::join_group:
    return serve_kafka_join_group(session_, std::move(req));
  case kafka::api_key::heartbeat:
    return serve_kafka_heartbeat(session_, std::move(req));
  case kafka::api_key::leave_group:
    return serve_kafka_leave_group(session_, std::move(req));
  case kafka::api_key::sync_group:
    return serve_kafka_sync_group(session_, std::move(req));
  case kafka::api_key::describe_groups:
    return serve_kafka_describe_groups(session_, std::move(req));
  case kafka::api_key::list_groups:
    return serve_kafka_list_groups(session_, std::move(req));
  case kafka::api_key::delete_groups:
    return serve_kafka_delete_groups(session_, std::move(req));
  case kafka::api_key::create_topics:
    return serve_kafka_create_topics(session_, std::move(req));
  case kafka::api_key::delete_topics:
    return serve_kafka_delete_topics(session_, std::move(req));
  case kafka::api_key::create_partitions:
    return serve_kafka_create_partitions(session_, std::move(req));
  case kafka::api_key::describe_configs:
    return serve_kafka_describe_configs(session_, std::move(req));
  case kafka::api_key::offset_for_leader_epoch:
    return serve_kafka_offsets_for_leader_epoch(session_, std::move(req));
  case kafka::api_key::metadata:
    break;
  default:
    fail_connection("no handler for API key " + std::to_string(req.header.api_key));
  }
  return handle_metadata(session_, "metadata")
      .then([req = std::move(req)](answer<metadata_snapshot>&& a) {
        // Kafka's Metadata response has no top-level error: a node that cannot say lists no
        // broker and no topic, and the client asks again.
        const cluster_metadata none;
        const auto& md = a.ok() && a.value ? *a.value : none;
        return response_frame(kafka::metadata_api, req,
                              metadata_response(req.body, req.header.version, md));
      });
}

} // namespace capstan
