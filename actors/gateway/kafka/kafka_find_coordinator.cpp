#include "actors/gateway/kafka/kafka_find_coordinator.hpp"

#include "actors/gateway/handlers/find_coordinator_handler.hpp"
#include "actors/gateway/kafka/kafka_error_code.hpp"
#include "actors/gateway/kafka/kafka_response_frame.hpp"
#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/message_codec.hpp"

namespace capstan {

namespace {

bytes answer_with(const kafka::request& req, const answer<coordinator_address>& a) {
  using kafka::value;
  auto out = kafka::make_message(kafka::find_coordinator_api, kafka::message_kind::response);
  out["ErrorCode"] = value(int64_t{kafka_error_code(a.err.code)});
  if (a.ok()) {
    out["NodeId"] = value(int64_t{a.value.node});
    out["Host"] = value(a.value.kafka_host);
    out["Port"] = value(int64_t{a.value.kafka_port});
  } else {
    out["ErrorMessage"] = value(a.err.message);
    out["NodeId"] = value(int64_t{-1});
    out["Host"] = value(std::string{});
    out["Port"] = value(int64_t{-1});
  }
  return response_frame(kafka::find_coordinator_api, req, out);
}

} // namespace

kj::Promise<bytes> serve_find_coordinator(const client_session& s, kafka::request req) {
  if (req.body["KeyType"].as_int() != 0) {
    static constexpr const char* method = "findCoordinator";
    s.ctx->metrics.count_request(method);
    return answer_with(
        req, refused<coordinator_address>(
                 *s.ctx, method,
                 make_error(errc::invalid_request,
                            "only group coordinators (key type 0): capstan has no transactions")));
  }
  return handle_find_coordinator(s, req.body["Key"].as_string())
      .then([req = std::move(req)](answer<coordinator_address>&& a) {
        if (a.ok() && a.value.kafka_port == 0)
          a.err = make_error(errc::coordinator_not_available,
                             "the coordinator, node " + std::to_string(a.value.node) +
                                 ", has no Kafka listener");
        return answer_with(req, a);
      });
}

} // namespace capstan
