// libFuzzer target: the Kafka listener's request path before any actor is asked
// (actors/gateway/kafka/): frames cut off a connection's byte stream with the listener's size
// limit (`next_frame`), each routed (`route_request`: answered, dispatched or a closed
// connection), and for a dispatched Metadata request the response built from a fixed cluster
// (`metadata_response`) and encoded at the request's version.
//
// Input: the bytes a client sends on one connection. Checks (FUZZ_CHECK): an answer is one whole
// frame holding an ApiVersions response to the request's correlation id; only offered APIs at
// offered versions are dispatched; every Metadata response encodes.
// Run: build-check/tests/fuzz/kafka_listener_fuzz tests/fuzz/corpus/kafka_listener, or
// tests/fuzz/run.sh kafka_listener [seconds] (tests/fuzz/README.md).

#include <cstddef>
#include <cstdint>

#include "actors/gateway/kafka/kafka_metadata_response.hpp"
#include "actors/gateway/kafka/kafka_offered_apis.hpp"
#include "actors/gateway/kafka/kafka_request_router.hpp"
#include "actors/gateway/rpc_limits.hpp"
#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/frame.hpp"
#include "runtime/kafka/message_codec.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace capstan::fuzz {
namespace {

const cluster_metadata& sample_cluster() {
  static const cluster_metadata md = [] {
    cluster_metadata m;
    m.cluster_id = "fuzz";
    m.controller_id = 1;
    broker_info b;
    b.node_id = 1;
    b.host = "127.0.0.1";
    b.port = 9192;
    b.kafka_host = "127.0.0.1";
    b.kafka_port = 9092;
    m.brokers = {b};
    topic_metadata t;
    t.name = "t";
    partition_assignment p;
    p.replicas = {1, 2};
    p.isr = {1};
    p.leader = 1;
    t.partitions = {p};
    m.topics["t"] = t;
    return m;
  }();
  return md;
}

void route_one(bytes_view frame) {
  auto route = route_request(frame);
  switch (route.what) {
  case kafka_route::kind::answer: {
    auto head = kafka::decode_request_header(frame);
    FUZZ_CHECK_OK(head);
    auto cut = kafka::next_frame(route.response, int32_t{1} << 30);
    FUZZ_CHECK_OK(cut);
    FUZZ_CHECK(cut->consumed == route.response.size());
    const auto offered = find_offered_api(head->header.api_key);
    FUZZ_CHECK(offered && head->header.api_key == kafka::api_key::api_versions);
    const auto version = offered->offers(head->header.version) ? head->header.version : 0;
    auto r = kafka::decode_response(kafka::api_versions_api, version, cut->frame);
    FUZZ_CHECK_OK(r);
    FUZZ_CHECK(r->correlation_id == head->header.correlation_id);
    break;
  }
  case kafka_route::kind::dispatch: {
    const auto& h = route.request.header;
    const auto offered = find_offered_api(h.api_key);
    FUZZ_CHECK(offered && offered->offers(h.version));
    if (h.api_key == kafka::api_key::metadata) {
      auto body = metadata_response(route.request.body, h.version, sample_cluster());
      bytes out;
      FUZZ_CHECK_OK(kafka::encode_response(kafka::metadata_api, h.version, h.correlation_id, body,
                                           out));
    }
    break;
  }
  case kafka_route::kind::close:
    break;
  }
}

} // namespace
} // namespace capstan::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace capstan;
  bytes_view in(data, size);
  while (!in.empty()) {
    auto cut = kafka::next_frame(in, min_socket_request_max_bytes);
    if (!cut || cut->consumed == 0) return 0;
    fuzz::route_one(cut->frame);
    in = in.subspan(cut->consumed);
  }
  return 0;
}
