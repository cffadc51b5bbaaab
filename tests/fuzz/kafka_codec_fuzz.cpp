// libFuzzer target: the Kafka wire codec (runtime/kafka/): frames cut off a byte stream
// (`next_frame`), request frames (`decode_request`: header, then the body as its description
// says) and response bodies of every described API and version (`decode_response`).
//
// Input: byte 0 picks a described API (modulo their count), byte 1 a version (any, so versions
// outside the description are tried too); bytes 2.. are a request frame's contents (no size
// prefix) and, separately, a response's for that API and version. The whole input is also read
// as a stream of size-prefixed frames of at most 4 KiB. Whatever decodes must encode again and
// decode to the same value, and its second encoding must equal its first (FUZZ_CHECK).
// Run: build-check/tests/fuzz/kafka_codec_fuzz tests/fuzz/corpus/kafka_codec, or
// tests/fuzz/run.sh kafka_codec [seconds] (tests/fuzz/README.md).

#include <cstddef>
#include <cstdint>

#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/frame.hpp"
#include "runtime/kafka/message_header.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace capstan::fuzz {
namespace {

using namespace capstan::kafka;

void frames(bytes_view in) {
  while (!in.empty()) {
    auto cut = next_frame(in, 4096);
    if (!cut || cut->consumed == 0) return;
    FUZZ_CHECK(cut->consumed == frame_size_bytes + cut->frame.size() &&
               cut->consumed <= in.size());
    in = in.subspan(cut->consumed);
  }
}

void request_frame(bytes_view in) {
  auto first = decode_request(in);
  if (!first) return;
  bytes wire;
  FUZZ_CHECK_OK(encode_request(first->header, first->body, wire));
  auto second = decode_request(wire);
  FUZZ_CHECK_OK(second);
  FUZZ_CHECK(second->header == first->header && second->body == first->body);
  bytes again;
  FUZZ_CHECK_OK(encode_request(second->header, second->body, again));
  FUZZ_CHECK(again == wire);
}

void response_frame(const api_schema& api, api_version version, bytes_view in) {
  auto first = decode_response(api, version, in);
  if (!first) return;
  bytes wire;
  FUZZ_CHECK_OK(encode_response(api, version, first->correlation_id, first->body, wire));
  auto second = decode_response(api, version, wire);
  FUZZ_CHECK_OK(second);
  FUZZ_CHECK(second->correlation_id == first->correlation_id && second->body == first->body);
  bytes again;
  FUZZ_CHECK_OK(encode_response(api, version, second->correlation_id, second->body, again));
  FUZZ_CHECK(again == wire);
}

} // namespace
} // namespace capstan::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace capstan::fuzz;
  const capstan::bytes_view in(data, size);
  frames(in);
  if (size < 2) return 0;
  const auto apis = described_apis();
  const api_schema& api = *apis[data[0] % apis.size()];
  const auto version = static_cast<api_version>(data[1]);
  request_frame(in.subspan(2));
  response_frame(api, version, in.subspan(2));
  return 0;
}
