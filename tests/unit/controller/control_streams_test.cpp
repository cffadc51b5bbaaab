// The controller's per-node streams of control messages: numbered in order, one out at a time,
// and a lost one replaced by the node's full state (docs/controller.md, "Metadata that always
// arrives").

#include <catch2/catch.hpp>

#include "actors/controller/control_streams.hpp"
#include "actors/replica/control_codec.hpp"
#include "actors/replica/control_sequence.hpp"

using namespace capstan;
using namespace capstan::controller;

namespace {

const node_id two{2};
const node_id three{3};

outgoing_message delta(node_id to) {
  update_metadata_msg m;
  m.full = false;
  return outgoing_message(to, m);
}

outgoing_message full(node_id to) { return outgoing_message(to, update_metadata_msg{}); }

outgoing_message lai(node_id to) { return outgoing_message(to, leader_and_isr_msg{}); }

int64_t sequence_of(const control_streams::sendable& m) {
  if (m.what == outgoing_message::kind::leader_and_isr) return decode_leader_and_isr(m.frame)->sequence;
  return decode_update_metadata(m.frame)->sequence;
}

} // namespace

TEST_CASE("a node's control messages go out one at a time, numbered in the order decided",
          "[controller][streams]") {
  control_streams s;
  s.queue({full(two), lai(two), delta(three)});
  auto first = s.next(two);
  REQUIRE(first);
  CHECK(sequence_of(*first) == 1);
  CHECK(decode_update_metadata(first->frame)->full);
  // One out at a time per node; other nodes have their own streams.
  CHECK_FALSE(s.next(two));
  auto other = s.next(three);
  REQUIRE(other);
  CHECK(sequence_of(*other) == 1);
  s.answered(two, true);
  auto second = s.next(two);
  REQUIRE(second);
  CHECK(second->what == outgoing_message::kind::leader_and_isr);
  CHECK(sequence_of(*second) == 2);
  s.answered(two, true);
  CHECK_FALSE(s.next(two));
  CHECK_FALSE(s.wants_full_state(two));
}

TEST_CASE("a control message that fails drops what follows it and makes the node want its full "
          "state, which the stream then takes first",
          "[controller][streams]") {
  control_streams s;
  s.queue({full(two), lai(two), delta(two)});
  REQUIRE(s.next(two));
  s.answered(two, true);
  REQUIRE(s.next(two));
  // Timed out, lost or refused: the delta behind it would be a gap at the node.
  s.answered(two, false);
  CHECK(s.queued(two) == 0);
  CHECK(s.wants_full_state(two));
  // Deltas decided meanwhile are not sent; the full state is, and numbers go on.
  s.queue({delta(two)});
  CHECK_FALSE(s.next(two));
  s.queue({full(two), lai(two)});
  CHECK_FALSE(s.wants_full_state(two));
  auto resent = s.next(two);
  REQUIRE(resent);
  CHECK(decode_update_metadata(resent->frame)->full);
  CHECK(sequence_of(*resent) == 4);
}

TEST_CASE("a node's queue is bounded: past it the queue gives way to the node's full state later",
          "[controller][streams]") {
  control_streams s(4);
  s.queue({full(two)});
  REQUIRE(s.next(two));
  for (int i = 0; i < 10; ++i) s.queue({delta(two)});
  CHECK(s.queued(two) == 0);
  // The message out is answered; the node then wants its full state.
  s.answered(two, true);
  CHECK(s.wants_full_state(two));
}

TEST_CASE("a new activity starts every stream again, its numbers above the last activity's",
          "[controller][streams]") {
  control_streams s;
  s.queue({full(two), delta(two)});
  REQUIRE(s.next(two));
  s.answered(two, false);
  s.reset();
  CHECK_FALSE(s.wants_full_state(two));
  s.queue({full(two)});
  auto m = s.next(two);
  REQUIRE(m);
  CHECK(sequence_of(*m) == 3);
}

// A controller that stops being active and becomes so again within one epoch (a leadership
// handover given up, a proposal timed out) sends its full state again under the same controller
// epoch. Numbered from 1 again, the node took it, and all after it, for duplicates of what it
// had applied, and answered them as applied: it never converged.
TEST_CASE("a controller active again within its epoch is not taken for duplicates by the node",
          "[controller][streams]") {
  control_streams s;
  control_sequence node;
  const auto admit = [&](const control_streams::sendable& m) {
    const bool is_full = m.what == outgoing_message::kind::update_metadata &&
                         decode_update_metadata(m.frame)->full;
    return node.admit(7, sequence_of(m), is_full);
  };
  s.queue({full(two), lai(two), delta(two)});
  for (int k = 0; k < 3; ++k) {
    auto m = s.next(two);
    REQUIRE(m);
    CHECK(admit(*m) == control_sequence::verdict::apply);
    s.answered(two, true);
  }
  s.reset();
  s.queue({full(two), lai(two)});
  auto again = s.next(two);
  REQUIRE(again);
  CHECK(admit(*again) == control_sequence::verdict::apply);
  s.answered(two, true);
  auto next = s.next(two);
  REQUIRE(next);
  CHECK(admit(*next) == control_sequence::verdict::apply);
}
