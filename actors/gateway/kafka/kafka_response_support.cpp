#include "actors/gateway/kafka/kafka_response_support.hpp"

namespace capstan {

kafka::value nullable_string(const std::string& s) {
  if (s.empty()) return kafka::value(kafka::null_value{});
  return kafka::value(s);
}

std::string string_or_empty(const kafka::value& v) {
  return v.is_null() ? std::string{} : v.as_string();
}

} // namespace capstan
