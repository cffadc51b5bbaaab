// A follower's Fetch names its process's incarnation (KIP-903's replica epoch); a peer's frame
// with a malformed one is refused, never thrown.

#include <catch2/catch.hpp>

#include <capnp/message.h>

#include "actors/replica/fetch_codec.hpp"
#include "schema/replication.capnp.h"

using namespace capstan;

TEST_CASE("a Fetch decodes with the incarnation it was encoded with, or none",
          "[replica][fetch_codec]") {
  fetch_message m;
  m.replica = node_id{3};
  m.partitions.push_back(fetch_partition{topic_partition{"orders", 1}, leader_epoch{4}, offset{7},
                                         offset{0}, 1024});
  auto unnamed = decode_fetch(encode_fetch(m));
  REQUIRE(unnamed.ok());
  CHECK(unnamed->replica == node_id{3});
  CHECK(unnamed->incarnation == incarnation_bytes{});
  REQUIRE(unnamed->partitions.size() == 1);
  CHECK(unnamed->partitions[0].fetch_offset == offset{7});

  m.incarnation.fill(5);
  auto named = decode_fetch(encode_fetch(m));
  REQUIRE(named.ok());
  CHECK(named->incarnation == m.incarnation);
}

TEST_CASE("a Fetch whose incarnation is not 16 bytes is INVALID_REQUEST", "[replica][fetch_codec]") {
  capnp::MallocMessageBuilder builder;
  auto root = builder.initRoot<schema::Fetch>();
  root.setReplicaId(3);
  const uint8_t three[] = {1, 2, 3};
  root.setReplicaIncarnation(capnp::Data::Reader(three, 3));
  auto r = decode_fetch(capnp_frame::from_builder(builder));
  REQUIRE_FALSE(r.ok());
  CHECK(r.code() == errc::invalid_request);
  CHECK(r.err().message.find("16 bytes") != std::string::npos);
}
