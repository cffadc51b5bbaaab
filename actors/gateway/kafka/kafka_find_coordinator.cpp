#include "actors/gateway/kafka/kafka_find_coordinator.hpp"

#include "actors/gateway/kafka/kafka_error_code.hpp"
#include "actors/gateway/kafka/kafka_response_support.hpp"
#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/message_codec.hpp"

namespace capstan {

namespace {

kafka::struct_value refusal(const error& e) {
  auto body = kafka::make_message(kafka::find_coordinator_api, kafka::message_kind::response);
  body["ErrorCode"] = kafka::value(int64_t{kafka_error_code(e.code)});
  body["ErrorMessage"] = nullable_string(e.message);
  body["NodeId"] = kafka::value(int64_t{-1});
  body["Host"] = kafka::value(std::string{});
  body["Port"] = kafka::value(int64_t{-1});
  return body;
}

} // namespace

kafka::struct_value find_coordinator_response(const answer<coordinator_address>& a,
                                              const std::vector<broker_info>& brokers) {
  if (!a.ok()) return refusal(a.err);
  for (const auto& b : brokers) {
    if (b.node_id != a.value.node || b.kafka_port == 0) continue;
    auto body = kafka::make_message(kafka::find_coordinator_api, kafka::message_kind::response);
    body["ErrorCode"] = kafka::value(int64_t{0});
    body["ErrorMessage"] = kafka::value(kafka::null_value{});
    body["NodeId"] = kafka::value(int64_t{b.node_id});
    body["Host"] = kafka::value(b.kafka_host);
    body["Port"] = kafka::value(int64_t{b.kafka_port});
    return body;
  }
  return refusal(make_error(errc::coordinator_not_available,
                            "the coordinator node " + std::to_string(a.value.node) +
                                " has no Kafka listener this node knows of"));
}

kj::Promise<bytes> serve_kafka_find_coordinator(const client_session& s, kafka::request req) {
  if (req.body["KeyType"].as_int() != kafka_coordinator_key_group) {
    auto body = refusal(make_error(errc::invalid_request, "only consumer groups (key type 0) have "
                                                          "coordinators here"));
    return response_frame(kafka::find_coordinator_api, req, body);
  }
  const auto group = req.body["Key"].as_string();
  return handle_find_coordinator(s, group).then([c = s.ctx, req = std::move(req)](
                                                    answer<coordinator_address>&& a) {
    auto cache = controller_cache(*c);
    const std::vector<broker_info> none;
    const auto& brokers = cache ? cache->cluster().brokers : none;
    return response_frame(kafka::find_coordinator_api, req, find_coordinator_response(a, brokers));
  });
}

} // namespace capstan
