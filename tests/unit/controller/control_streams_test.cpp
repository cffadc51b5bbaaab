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

// Answers the message out to `node` as applied; the next one, which must be there.
control_streams::sendable answer_and_next(control_streams& s, node_id node) {
  s.answered(node, true);
  auto next = s.next(node);
  REQUIRE(next);
  return std::move(*next);
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
  // StopReplica never joins another message (deltas would join into one).
  for (int i = 0; i < 10; ++i) s.queue({outgoing_message(two, stop_replica_msg{})});
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

TEST_CASE("a control message's answer may take longer the more partitions it names",
          "[controller][streams]") {
  // A node opening 10,000 replicas for one LeaderAndIsr answers after seconds; timing it out
  // would cost the node its whole state again, and the same work.
  using std::chrono::milliseconds;
  control_streams s;
  leader_and_isr_msg many;
  many.partitions.resize(10000);
  for (int32_t i = 0; i < 10000; ++i) many.partitions[static_cast<size_t>(i)].tp = {"t", i};
  stop_replica_msg few;
  few.partitions.resize(3);
  // UpdateMetadata, even a full one naming every partition, costs the node little.
  control_streams u;
  update_metadata_msg everything;
  everything.partitions.resize(10000);
  u.queue({outgoing_message(two, everything)});
  CHECK(u.next(two)->timeout(milliseconds(5000)) == milliseconds(5000));
  s.queue({outgoing_message(two, many), outgoing_message(three, few)});
  auto big = s.next(two);
  REQUIRE(big);
  CHECK(big->timeout(milliseconds(5000)) == milliseconds(15000));
  auto small = s.next(three);
  REQUIRE(small);
  CHECK(small->timeout(milliseconds(5000)) == milliseconds(5003));
}

TEST_CASE("a LeaderAndIsr queued right behind another one joins it, a partition's later state "
          "winning",
          "[controller][streams]") {
  // A restart's 20,000 ISR changes would queue past the bound, and the node get its whole state
  // again, if each went as a message of its own.
  auto state = [](int32_t partition, int32_t epoch) {
    partition_state_msg p;
    p.tp = {"t", partition};
    p.leader = two;
    p.epoch = leader_epoch{epoch};
    return p;
  };
  auto with = [&](std::vector<partition_state_msg> states) {
    leader_and_isr_msg m;
    m.partitions = std::move(states);
    return outgoing_message(two, m);
  };
  control_streams s;
  s.queue({with({state(0, 1)})});
  auto out = s.next(two); // out: nothing joins it
  REQUIRE(out);
  s.queue({with({state(1, 1), state(2, 1)}), with({state(1, 2)}), delta(two), with({state(3, 1)})});
  CHECK(s.queued(two) == 3);
  auto m = decode_leader_and_isr(answer_and_next(s, two).frame);
  REQUIRE(m);
  CHECK(m->sequence == sequence_of(*out) + 1);
  REQUIRE(m->partitions.size() == 2);
  CHECK(m->partitions[0].tp.second == 2);
  CHECK(m->partitions[1].tp.second == 1);
  CHECK(m->partitions[1].epoch == leader_epoch{2});
  // The UpdateMetadata between keeps the last LeaderAndIsr apart, numbered right after it.
  auto between = answer_and_next(s, two);
  CHECK(between.what == outgoing_message::kind::update_metadata);
  CHECK(sequence_of(between) == m->sequence + 1);
  auto last = answer_and_next(s, two);
  CHECK(sequence_of(last) == m->sequence + 2);
  CHECK(decode_leader_and_isr(last.frame)->partitions.size() == 1);
}

TEST_CASE("each commit's UpdateMetadata delta and LeaderAndIsr join the queued pair before them, "
          "and a StopReplica or a full state is never passed",
          "[controller][streams]") {
  auto topic = [](const std::string& name, uint8_t id, std::string retention) {
    topic_config_msg t;
    t.name = name;
    t.id.fill(id);
    t.configs["retention.ms"] = std::move(retention);
    return t;
  };
  // A commit's messages for one partition: with `t` the topic's (new) configs, without it an
  // ISR change.
  auto pair = [&](int32_t partition, topic_config_msg t, bool with_topic) {
    update_metadata_msg d;
    d.full = false;
    if (with_topic) d.topics.push_back(t);
    partition_state_msg p;
    p.tp = {t.name, partition};
    p.id = t.id;
    d.partitions.push_back(p);
    leader_and_isr_msg l;
    l.partitions.push_back(p);
    return std::vector<outgoing_message>{outgoing_message(two, d), outgoing_message(two, l)};
  };
  control_streams s;
  s.queue({full(two)});
  auto first = s.next(two);
  REQUIRE(first);
  for (int i = 0; i < 300; ++i) s.queue(pair(i, topic("t", 1, ""), false));
  // Past max_queued one at a time; two when they join.
  CHECK(s.queued(two) == 2);
  // The topic is deleted, then created again under its name: neither delta goes before the
  // LeaderAndIsr of the old topic, and nothing goes before the StopReplica.
  update_metadata_msg removal;
  removal.full = false;
  removal.removed_topics.push_back(topic("t", 1, "").id);
  s.queue({outgoing_message(two, removal)});
  s.queue(pair(0, topic("t", 2, "new"), true));
  s.queue({outgoing_message(two, stop_replica_msg{})});
  s.queue(pair(1, topic("t", 2, "newer"), true));
  CHECK(s.queued(two) == 7);

  auto isr_changes = decode_update_metadata(answer_and_next(s, two).frame);
  REQUIRE(isr_changes);
  CHECK(isr_changes->sequence == sequence_of(*first) + 1);
  CHECK(isr_changes->topics.empty());
  CHECK(isr_changes->partitions.size() == 300);
  CHECK(decode_leader_and_isr(answer_and_next(s, two).frame)->partitions.size() == 300);
  // The removal and the new topic's delta joined: the old topic's states are gone from it.
  auto recreated = decode_update_metadata(answer_and_next(s, two).frame);
  REQUIRE(recreated);
  CHECK(recreated->removed_topics.size() == 1);
  REQUIRE(recreated->topics.size() == 1);
  CHECK(recreated->topics[0].id == topic("t", 2, "").id);
  CHECK(recreated->topics[0].configs.at("retention.ms") == "new");
  REQUIRE(recreated->partitions.size() == 1);
  CHECK(recreated->partitions[0].id == topic("t", 2, "").id);
  CHECK(decode_leader_and_isr(answer_and_next(s, two).frame)->partitions.size() == 1);
  CHECK(answer_and_next(s, two).what == outgoing_message::kind::stop_replica);
  auto after_stop = answer_and_next(s, two);
  CHECK(decode_update_metadata(after_stop.frame)->topics[0].configs.at("retention.ms") == "newer");
  CHECK(answer_and_next(s, two).what == outgoing_message::kind::leader_and_isr);
}

TEST_CASE("a delta does not go before a LeaderAndIsr of a topic it removes or changes, and one "
          "that does go before carries its addresses along",
          "[controller][streams]") {
  topic_id id{};
  id.fill(5);
  auto endpoint = [](uint16_t port) {
    node_endpoint_msg e;
    e.node = three;
    e.host = "h";
    e.cluster_port = port;
    return e;
  };
  auto lai_of = [&](const std::string& topic, uint16_t port) {
    leader_and_isr_msg l;
    partition_state_msg p;
    p.tp = {topic, 0};
    p.id = id;
    l.partitions.push_back(p);
    l.leaders.push_back(endpoint(port));
    return outgoing_message(two, l);
  };
  auto delta_with = [&](uint16_t port) {
    update_metadata_msg d;
    d.full = false;
    d.nodes.push_back(endpoint(port));
    return d;
  };
  control_streams s;
  s.queue({full(two)});
  REQUIRE(s.next(two));
  // Created (its configs, its replicas), then deleted, while the full state is out.
  auto created = delta_with(9000);
  created.topics.push_back(topic_config_msg{"gone", id, false, {{"retention.ms", "1"}}});
  auto removed = delta_with(9000);
  removed.removed_topics.push_back(id);
  s.queue({outgoing_message(two, created), lai_of("gone", 9000), outgoing_message(two, removed)});
  CHECK(s.queued(two) == 3);

  // An ISR change of another topic, after node 3 moved to port 9100: its delta goes before the
  // queued LeaderAndIsr, whose address of node 3 follows.
  control_streams t;
  t.queue({full(two)});
  REQUIRE(t.next(two));
  t.queue({outgoing_message(two, delta_with(9000)), lai_of("kept", 9000)});
  t.queue({outgoing_message(two, delta_with(9100)), lai_of("kept", 9100)});
  REQUIRE(t.queued(two) == 2);
  auto um = answer_and_next(t, two);
  CHECK(decode_update_metadata(um.frame)->nodes.at(0).cluster_port == 9100);
  auto lai = decode_leader_and_isr(answer_and_next(t, two).frame);
  REQUIRE(lai);
  CHECK(lai->leaders.at(0).cluster_port == 9100);
}
