// Two actor systems in one process, joined over 127.0.0.1 by CAF's middleman: capnp frames and
// capstan errors cross the wire intact.

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

#include <caf/atom.hpp>
#include <caf/make_message.hpp>
#include <caf/replies_to.hpp>
#include <caf/result.hpp>
#include <caf/typed_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <capnp/message.h>
#include <catch2/catch.hpp>

#include "runtime/actor/caf_error.hpp"
#include "runtime/messages/capnp_frame.hpp"
#include "schema/replication.capnp.h"
#include "tests/support/caf_fixture.hpp"

namespace capstan {
namespace {

using namespace std::chrono_literals;

using fetch_atom = caf::atom_constant<caf::atom("fetch")>;
using fetch_actor = caf::typed_actor<caf::replies_to<fetch_atom, capnp_frame>::with<capnp_frame>>;

constexpr auto reply_timeout = 10s;

uint8_t record_byte(int64_t offset, size_t i) {
  return static_cast<uint8_t>((offset * 31 + static_cast<int64_t>(i)) & 0xff);
}

// Answers a Fetch with one PartitionData per requested partition: high watermark
// fetchOffset + 10 and `partitionMaxBytes` bytes of a pattern derived from the offset.
// A negative replica id is refused with NOT_LEADER_OR_FOLLOWER.
capnp_frame make_response(schema::Fetch::Reader fetch) {
  capnp::MallocMessageBuilder builder;
  auto partitions = builder.initRoot<schema::FetchResponse>().initPartitions(
    fetch.getPartitions().size());
  for (unsigned i = 0; i < partitions.size(); ++i) {
    auto in = fetch.getPartitions()[i];
    auto out = partitions[i];
    out.setTopicPartition(in.getTopicPartition());
    out.setHighWatermark(in.getFetchOffset() + 10);
    auto records = out.initRecords(static_cast<unsigned>(in.getPartitionMaxBytes()));
    for (size_t b = 0; b < records.size(); ++b)
      records[b] = record_byte(in.getFetchOffset(), b);
  }
  return capnp_frame::from_builder(builder);
}

fetch_actor::behavior_type responder(fetch_actor::pointer) {
  return {[](fetch_atom, const capnp_frame& request) -> caf::result<capnp_frame> {
    auto replica = request.try_read<schema::Fetch>(
      [](schema::Fetch::Reader fetch) { return fetch.getReplicaId(); });
    if (!replica)
      return to_caf_error(replica.err());
    if (*replica < 0)
      return to_caf_error(make_error(errc::not_leader_or_follower, "node 1 does not lead"));
    auto response = request.try_read<schema::Fetch>(make_response);
    if (!response)
      return to_caf_error(response.err());
    return std::move(*response);
  }};
}

capnp_frame make_fetch(int32_t replica, int32_t max_bytes) {
  capnp::MallocMessageBuilder builder;
  auto fetch = builder.initRoot<schema::Fetch>();
  fetch.setReplicaId(replica);
  auto partitions = fetch.initPartitions(3);
  for (unsigned i = 0; i < partitions.size(); ++i) {
    partitions[i].initTopicPartition().setTopic("orders");
    partitions[i].getTopicPartition().setPartition(static_cast<int32_t>(i));
    partitions[i].setFetchOffset(100 * (i + 1));
    partitions[i].setPartitionMaxBytes(max_bytes);
  }
  return capnp_frame::from_builder(builder);
}

} // namespace

TEST_CASE("a Fetch frame crosses to a remote actor and its FetchResponse comes back intact",
          "[cluster][messages]") {
  test::threaded_system server;
  test::threaded_system client;
  auto port = server.publish(server.spawn(responder));
  REQUIRE(port);
  auto remote = client.remote_actor<fetch_actor>(*port);
  REQUIRE(remote);

  constexpr int32_t max_bytes = 256 * 1024;
  auto reply = client.request<capnp_frame>(*remote, reply_timeout, fetch_atom::value,
                                           make_fetch(2, max_bytes));
  REQUIRE(reply);
  auto reader = reply->reader<schema::FetchResponse>();
  auto partitions = reader.root().getPartitions();
  REQUIRE(partitions.size() == 3);
  for (unsigned i = 0; i < partitions.size(); ++i) {
    auto p = partitions[i];
    CHECK(p.getTopicPartition().getTopic() == "orders");
    CHECK(p.getTopicPartition().getPartition() == static_cast<int32_t>(i));
    CHECK(p.getHighWatermark() == 100 * (i + 1) + 10);
    auto records = p.getRecords();
    REQUIRE(records.size() == max_bytes);
    size_t mismatches = 0;
    for (size_t b = 0; b < records.size(); ++b)
      mismatches += records[b] != record_byte(100 * (i + 1), b);
    CHECK(mismatches == 0);
  }
}

TEST_CASE("a capstan error from a remote actor arrives with its code and text",
          "[cluster][messages]") {
  test::threaded_system server;
  test::threaded_system client;
  auto port = server.publish(server.spawn(responder));
  REQUIRE(port);
  auto remote = client.remote_actor<fetch_actor>(*port);
  REQUIRE(remote);

  auto reply = client.request<capnp_frame>(*remote, reply_timeout, fetch_atom::value,
                                           make_fetch(-1, 16));
  REQUIRE_FALSE(reply);
  auto err = from_caf_error(reply.error());
  CHECK(err.code == errc::not_leader_or_follower);
  CHECK(err.message == "node 1 does not lead");
  CHECK(client.sys().render(reply.error()).find("NOT_LEADER_OR_FOLLOWER") != std::string::npos);
}

} // namespace capstan
