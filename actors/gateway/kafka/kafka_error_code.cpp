#include "actors/gateway/kafka/kafka_error_code.hpp"

#include <vector>

#include <capnp/schema.h>

#include "schema/client.capnp.h"

namespace capstan {

namespace {

// Each enumerant's $kafka annotation, by ordinal: the only Int16 annotation an enumerant holds.
std::vector<int16_t> kafka_numbers() {
  std::vector<int16_t> out;
  for (auto e : capnp::Schema::from<rpc::ErrorCode>().getEnumerants()) {
    int16_t number = -1;
    for (auto a : e.getProto().getAnnotations())
      if (a.getValue().isInt16()) number = a.getValue().getInt16();
    out.push_back(number);
  }
  return out;
}

} // namespace

int16_t kafka_error_code(errc code) {
  static const std::vector<int16_t> numbers = kafka_numbers();
  const auto at = static_cast<size_t>(code);
  return at < numbers.size() ? numbers[at] : int16_t{-1};
}

} // namespace capstan
