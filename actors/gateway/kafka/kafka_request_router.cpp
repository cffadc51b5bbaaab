#include "actors/gateway/kafka/kafka_request_router.hpp"

#include "actors/gateway/kafka/kafka_offered_apis.hpp"
#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/frame.hpp"

namespace capstan {

namespace {

kafka_route close_because(std::string why) {
  kafka_route r;
  r.what = kafka_route::kind::close;
  r.why = std::move(why);
  return r;
}

kafka_route api_versions_answer(int32_t correlation_id, kafka::api_version version, errc error) {
  kafka_route r;
  r.what = kafka_route::kind::answer;
  const auto start = kafka::begin_frame(r.response);
  auto body = api_versions_response(error);
  if (auto s = kafka::encode_response(kafka::api_versions_api, version, correlation_id, body,
                                      r.response);
      !s)
    return close_because("cannot encode the ApiVersions response: " + s.err().to_string());
  kafka::end_frame(r.response, start);
  return r;
}

} // namespace

kafka_route route_request(bytes_view frame) {
  auto head = kafka::decode_request_header(frame);
  if (!head) return close_because("unreadable request header: " + head.err().to_string());
  const auto& h = head->header;
  auto api = find_offered_api(h.api_key);
  if (!api) return close_because("API key " + std::to_string(h.api_key) + " is not offered");
  if (!api->offers(h.version)) {
    if (h.api_key == kafka::api_key::api_versions)
      return api_versions_answer(h.correlation_id, 0, errc::unsupported_version);
    return close_because("API key " + std::to_string(h.api_key) + " version " +
                         std::to_string(h.version) + " is not offered");
  }
  if (frame.size() > max_kafka_request_bytes && h.api_key != kafka::api_key::produce)
    return close_because("a request of " + std::to_string(frame.size()) + " bytes of API key " +
                         std::to_string(h.api_key) + " is above " +
                         std::to_string(max_kafka_request_bytes));
  auto decoded = kafka::decode_request(frame);
  if (!decoded)
    return close_because("unreadable request of API key " + std::to_string(h.api_key) + ": " +
                         decoded.err().to_string());
  if (h.api_key == kafka::api_key::api_versions)
    return api_versions_answer(h.correlation_id, h.version, errc::none);
  kafka_route r;
  r.what = kafka_route::kind::dispatch;
  r.request = std::move(*decoded);
  return r;
}

} // namespace capstan
