// A frame sent between local actors shares its buffer: the receiver sees the sender's words.

#include <caf/atom.hpp>
#include <caf/behavior.hpp>
#include <caf/event_based_actor.hpp>
#include <capnp/message.h>
#include <catch2/catch.hpp>

#include "runtime/messages/capnp_frame.hpp"
#include "schema/replication.capnp.h"
#include "tests/support/caf_fixture.hpp"

namespace capstan {
namespace {

using echo_atom = caf::atom_constant<caf::atom("echo")>;

caf::behavior echo(caf::event_based_actor*) {
  return {[](echo_atom, const capnp_frame& frame) { return frame; }};
}

} // namespace

TEST_CASE_METHOD(test::caf_fixture, "a local send shares the frame's buffer",
                 "[messages][capnp_frame][actor]") {
  capnp::MallocMessageBuilder builder;
  auto fetch = builder.initRoot<schema::Fetch>();
  fetch.setReplicaId(4);
  fetch.initPartitions(1)[0].setFetchOffset(77);
  auto frame = capnp_frame::from_builder(builder);

  auto echoer = spawn(echo);
  auto reply = request<capnp_frame>(echoer, echo_atom::value, frame);
  REQUIRE(reply);
  CHECK(reply->shares_buffer_with(frame));
  CHECK(reply->words().begin() == frame.words().begin());
  auto reader = reply->reader<schema::Fetch>();
  CHECK(reader.root().getPartitions()[0].getFetchOffset() == 77);
}

} // namespace capstan
