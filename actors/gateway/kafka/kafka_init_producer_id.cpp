#include "actors/gateway/kafka/kafka_init_producer_id.hpp"

#include "actors/gateway/handlers/init_producer_id_handler.hpp"
#include "actors/gateway/kafka/kafka_error_code.hpp"
#include "actors/gateway/kafka/kafka_response_frame.hpp"
#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/message_codec.hpp"

namespace capstan {

kj::Promise<bytes> serve_init_producer_id(const client_session& s, kafka::request req) {
  const auto& id = req.body["TransactionalId"];
  const bool transactional = !id.is_null() && !id.as_string().empty();
  return handle_init_producer_id(s, transactional)
      .then([req = std::move(req)](answer<producer_identity>&& a) {
        using kafka::value;
        auto out = kafka::make_message(kafka::init_producer_id_api, kafka::message_kind::response);
        out["ErrorCode"] = value(int64_t{kafka_error_code(a.err.code)});
        if (a.ok()) {
          out["ProducerId"] = value(a.value.producer_id);
          out["ProducerEpoch"] = value(int64_t{a.value.producer_epoch});
        }
        return response_frame(kafka::init_producer_id_api, req, out);
      });
}

} // namespace capstan
