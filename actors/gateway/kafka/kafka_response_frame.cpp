#include "actors/gateway/kafka/kafka_response_frame.hpp"

#include <string>

#include <kj/exception.h>

#include "runtime/kafka/frame.hpp"

namespace capstan {

bytes response_frame(const kafka::api_schema& api, const kafka::request& req,
                     const kafka::struct_value& body) {
  bytes out;
  const auto start = kafka::begin_frame(out);
  if (auto s = kafka::encode_response(api, req.header.version, req.header.correlation_id, body, out);
      !s) {
    const std::string why =
        "cannot encode the " + std::string{api.name} + " response: " + s.err().to_string();
    kj::throwFatalException(
        kj::Exception(kj::Exception::Type::FAILED, __FILE__, __LINE__, kj::str(why.c_str())));
  }
  kafka::end_frame(out, start);
  return out;
}

kafka::struct_value element_of(const kafka::struct_value& parent, std::string_view name) {
  for (const auto& f : parent.fields())
    if (f.name == name) return kafka::struct_value(f.fields);
  return kafka::struct_value{};
}

} // namespace capstan
